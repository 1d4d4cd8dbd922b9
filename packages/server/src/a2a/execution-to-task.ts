import {
  type Artifact,
  type Message,
  type Part,
  Role,
  type Task,
  TaskState,
  type TaskStatus,
} from "@a2a-js/sdk";
import {
  type ExecutionProgress,
  type ExecutionStatus,
  executionFailure,
  type SkillExecution,
  toCallerError,
} from "@skillbox/core";

/**
 * The A2A state of each execution status. `awaiting_approval` is `input-required`: the task
 * waits for a person (who approves over the HTTP API or the CLI, not through A2A).
 */
const STATE_BY_STATUS: Record<ExecutionStatus, TaskState> = {
  queued: TaskState.TASK_STATE_SUBMITTED,
  pending: TaskState.TASK_STATE_WORKING,
  running: TaskState.TASK_STATE_WORKING,
  awaiting_approval: TaskState.TASK_STATE_INPUT_REQUIRED,
  success: TaskState.TASK_STATE_COMPLETED,
  error: TaskState.TASK_STATE_FAILED,
  timeout: TaskState.TASK_STATE_FAILED,
  interrupted: TaskState.TASK_STATE_FAILED,
  cancelled: TaskState.TASK_STATE_CANCELED,
  denied: TaskState.TASK_STATE_REJECTED,
  rejected: TaskState.TASK_STATE_REJECTED,
};

/** The task state an execution status maps to. */
export function taskStateOf(status: ExecutionStatus): TaskState {
  return STATE_BY_STATUS[status] ?? TaskState.TASK_STATE_FAILED;
}

/** The execution statuses shown as `state` (for `tasks/list`'s status filter). */
export function statusesOf(state: TaskState): ExecutionStatus[] {
  return (Object.keys(STATE_BY_STATUS) as ExecutionStatus[]).filter(
    (status) => STATE_BY_STATUS[status] === state,
  );
}

/**
 * What a task's metadata says about its execution: `executionId`, `skill`, `skillVersion`,
 * `executionStatus`, and when there is one `error` (core's `toCallerError` view, no stack),
 * `progress` (the latest report) and `approval` (the approval record).
 */
export function taskMetadataOf(execution: SkillExecution): Record<string, unknown> {
  const metadata: Record<string, unknown> = {
    executionId: execution.id,
    skill: execution.skillName,
    skillVersion: execution.skillVersion,
    executionStatus: execution.status,
  };
  const failure = executionFailure(execution);
  if (failure !== undefined) metadata.error = toCallerError(failure, { skill: skillOf(execution) });
  if (execution.progress != null) metadata.progress = execution.progress;
  if (execution.approval != null) metadata.approval = execution.approval;
  return metadata;
}

/**
 * The task status of an execution now: its state, when it got there, and an agent message when
 * there is something to say — `CODE: message` of a failure, what an approval waits for, the
 * latest progress message of a running one.
 */
export function taskStatusOf(execution: SkillExecution, contextId: string): TaskStatus {
  const text = statusText(execution);
  return {
    state: taskStateOf(execution.status),
    message: text === undefined ? undefined : statusMessage(execution.id, execution.status, contextId, text),
    timestamp: statusTimestamp(execution),
  };
}

/** The `working` status of a progress report: its message, when it has one, as the agent's. */
export function progressStatusOf(
  executionId: string,
  contextId: string,
  progress: ExecutionProgress,
): TaskStatus {
  return {
    state: TaskState.TASK_STATE_WORKING,
    message:
      progress.message === undefined
        ? undefined
        : statusMessage(executionId, "running", contextId, progress.message),
    timestamp: progress.at,
  };
}

/** The output artifact of a successful execution: one data part, named by the execution id. */
export function outputArtifactOf(execution: SkillExecution): Artifact {
  return {
    artifactId: execution.id,
    name: "output",
    description: `Output of ${skillOf(execution)}`,
    parts: [dataPart(execution.output)],
    metadata: { executionId: execution.id },
    extensions: [],
  };
}

/**
 * An execution seen as an A2A task, which is how the task survives a restart: the id is the
 * execution id, the context the execution's `sessionId`, the history the input (as the data part
 * the skill received; the caller's own message is not stored) and the status message, the
 * artifact the output of a successful one.
 */
export function executionToTask(execution: SkillExecution): Task {
  const contextId = execution.sessionId ?? execution.id;
  const status = taskStatusOf(execution, contextId);
  const input: Message = {
    messageId: `${execution.id}-input`,
    contextId,
    taskId: execution.id,
    role: Role.ROLE_USER,
    parts: [dataPart(execution.input)],
    metadata: { skill: skillOf(execution) },
    extensions: [],
    referenceTaskIds: [],
  };
  return {
    id: execution.id,
    contextId,
    status,
    artifacts: execution.status === "success" ? [outputArtifactOf(execution)] : [],
    history: status.message === undefined ? [input] : [input, status.message],
    metadata: taskMetadataOf(execution),
  };
}

function statusText(execution: SkillExecution): string | undefined {
  if (execution.status === "awaiting_approval") {
    const approval = execution.approval;
    const until = approval?.expiresAt == null ? "" : ` until ${approval.expiresAt}`;
    return (
      `Awaiting approval: ${approval?.reason ?? "the skill requires approval"}. A person approves or ` +
      `rejects execution ${execution.id}${until} (POST /api/executions/${execution.id}/approve or ` +
      `/reject, or \`skillbox approve ${execution.id}\`); the task goes on once approved.`
    );
  }
  const failure = executionFailure(execution);
  if (failure !== undefined) {
    const view = toCallerError(failure, { skill: skillOf(execution) });
    return `${view.code}: ${view.message}`;
  }
  if (execution.status === "running" && execution.progress?.message !== undefined) {
    return execution.progress.message;
  }
  return undefined;
}

function statusTimestamp(execution: SkillExecution): string {
  if (execution.finishedAt !== null) return execution.finishedAt;
  if (execution.status === "awaiting_approval" && execution.approval != null) {
    return execution.approval.requestedAt;
  }
  return execution.progress?.at ?? execution.createdAt;
}

/** Options of {@link agentTextMessage}. */
export interface AgentTextMessageOptions {
  messageId: string;
  taskId: string;
  contextId: string;
  text: string;
}

/** An agent message of one text part, such as the one explaining a task status. */
export function agentTextMessage({ messageId, taskId, contextId, text }: AgentTextMessageOptions): Message {
  return {
    messageId,
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [
      { content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The agent message of a status; its id is stable, so reading the task twice gives the same one. */
function statusMessage(taskId: string, status: ExecutionStatus, contextId: string, text: string): Message {
  return agentTextMessage({ messageId: `${taskId}-${status}`, taskId, contextId, text });
}

function dataPart(value: unknown): Part {
  return {
    content: { $case: "data", value: value ?? null },
    metadata: undefined,
    filename: "",
    mediaType: "application/json",
  };
}

function skillOf(execution: SkillExecution): string {
  return `${execution.skillName}@${execution.skillVersion}`;
}
