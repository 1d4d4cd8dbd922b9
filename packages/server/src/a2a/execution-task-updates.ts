import type { TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent } from "@a2a-js/sdk";
import { isFinalExecutionStatus, type SkillExecution, type SkillExecutor } from "@skillbox/core";
import {
  outputArtifactOf,
  progressStatusOf,
  taskMetadataOf,
  taskStateOf,
  taskStatusOf,
} from "./execution-to-task.js";

/** One change of a task, in the shape of the SDK's `AgentEvent`s (and of a stream answer's payload). */
export type TaskUpdate =
  | { kind: "statusUpdate"; data: TaskStatusUpdateEvent }
  | { kind: "artifactUpdate"; data: TaskArtifactUpdateEvent };

/** Options of {@link executionTaskUpdates}. */
export interface ExecutionTaskUpdatesOptions {
  /** The owner id the caller acts as (another owner's execution yields nothing). */
  owner: string;
  /** The state the caller has shown already: not repeated. */
  shown?: TaskState;
}

/**
 * Follows execution `id` as updates of its task, from now on: a `status-update` at every change
 * of state and at every progress report (state `working`, the report in `metadata.progress`, its
 * message as the status message), and at the end the output artifact (of a success) and the
 * final status. It ends after the final state, or after `input-required` when the execution
 * waits for approval — an A2A stream ends at an interrupted state; a caller resubscribes
 * (`tasks/resubscribe`) to follow it further. Ending the iteration early ends the subscription.
 */
export async function* executionTaskUpdates(
  executor: SkillExecutor,
  id: string,
  options: ExecutionTaskUpdatesOptions,
): AsyncGenerator<TaskUpdate, void, undefined> {
  const events = executor.events(id, { apiKeyId: options.owner });
  try {
    const current = await executor.getExecution(id);
    if (current === undefined || current.apiKeyId !== options.owner) return;
    const contextId = current.sessionId ?? id;
    let shown = options.shown;
    const updatesOf = (execution: SkillExecution): { updates: TaskUpdate[]; last: boolean } => {
      const state = taskStateOf(execution.status);
      const final = isFinalExecutionStatus(execution.status);
      const last = final || execution.status === "awaiting_approval";
      // Already shown (a resubscription to a task waiting for approval): wait for what comes next.
      if (state === shown && !final) return { updates: [], last: false };
      shown = state;
      const updates: TaskUpdate[] = [];
      if (execution.status === "success") {
        updates.push({
          kind: "artifactUpdate",
          data: {
            taskId: id,
            contextId,
            artifact: outputArtifactOf(execution),
            append: false,
            lastChunk: true,
            metadata: undefined,
          },
        });
      }
      updates.push({
        kind: "statusUpdate",
        data: {
          taskId: id,
          contextId,
          status: taskStatusOf(execution, contextId),
          metadata: taskMetadataOf(execution),
        },
      });
      return { updates, last };
    };
    // The subscription starts with the status as it stands, so nothing between the read above
    // and it is lost.
    for await (const event of events) {
      if (event.type === "progress") {
        shown = taskStateOf("running");
        yield {
          kind: "statusUpdate",
          data: {
            taskId: id,
            contextId,
            status: progressStatusOf(id, contextId, event.progress),
            metadata: { progress: event.progress },
          },
        };
        continue;
      }
      const step = updatesOf(event.execution);
      yield* step.updates;
      if (step.last) return;
    }
  } finally {
    await events.return?.();
  }
}
