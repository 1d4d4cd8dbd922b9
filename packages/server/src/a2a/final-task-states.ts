import { TaskState } from "@a2a-js/sdk";

/** The states after which a task never changes (the SDK keeps its own list unexported). */
export const FINAL_TASK_STATES: ReadonlySet<TaskState | undefined> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);
