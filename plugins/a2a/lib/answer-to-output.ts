import { type Message, type Part, type Task, TaskState, taskStateToJSON } from "@a2a-js/sdk";
import type { OutputPart, SendMessageOutput } from "./send-message-schemas.js";

/** The skill's output for the agent's answer: a message, or a task (final, or stopped polling). */
export function answerToOutput(answer: Message | Task): SendMessageOutput {
  if (!("status" in answer)) {
    const parts = answer.parts.map(toOutputPart);
    return {
      kind: "message",
      ...optional("taskId", answer.taskId),
      ...optional("contextId", answer.contextId),
      state: "completed",
      text: textOf(parts),
      data: dataOf(parts),
      artifacts: [],
      ...(answer.metadata === undefined ? {} : { metadata: answer.metadata }),
    };
  }
  const artifacts = answer.artifacts.map((artifact) => ({
    artifactId: artifact.artifactId,
    ...optional("name", artifact.name),
    ...optional("description", artifact.description),
    parts: artifact.parts.map(toOutputPart),
  }));
  const artifactParts = artifacts.flatMap((artifact) => artifact.parts);
  const statusMessage =
    answer.status?.message === undefined ? "" : textOf(answer.status.message.parts.map(toOutputPart));
  const text = textOf(artifactParts);
  return {
    kind: "task",
    taskId: answer.id,
    ...optional("contextId", answer.contextId),
    state: stateName(answer.status?.state),
    text: text === "" ? statusMessage : text,
    data: dataOf(artifactParts),
    ...optional("statusMessage", statusMessage),
    artifacts,
    ...(answer.metadata === undefined || Object.keys(answer.metadata).length === 0
      ? {}
      : { metadata: answer.metadata }),
  };
}

/** `TASK_STATE_INPUT_REQUIRED` → `input-required`, as A2A 0.3 and most tools spell states. */
function stateName(state: TaskState | undefined): SendMessageOutput["state"] {
  if (state === undefined || state === TaskState.TASK_STATE_UNSPECIFIED || state === TaskState.UNRECOGNIZED) {
    return "unknown";
  }
  return taskStateToJSON(state)
    .replace("TASK_STATE_", "")
    .toLowerCase()
    .replace("_", "-") as SendMessageOutput["state"];
}

function toOutputPart(part: Part): OutputPart {
  const content = part.content;
  if (content?.$case === "text") return { kind: "text", text: content.value };
  if (content?.$case === "data") return { kind: "data", data: content.value ?? null };
  return {
    kind: "file",
    ...(content?.$case === "url" ? { url: content.value } : {}),
    ...optional("filename", part.filename),
    ...optional("mediaType", part.mediaType),
    ...(content?.$case === "raw" ? { sizeBytes: content.value.length } : {}),
  };
}

function textOf(parts: OutputPart[]): string {
  return parts.flatMap((part) => (part.kind === "text" ? [part.text] : [])).join("\n");
}

function dataOf(parts: OutputPart[]): unknown[] {
  return parts.flatMap((part) => (part.kind === "data" ? [part.data] : []));
}

/** `{ [key]: value }` for a non-empty string (proto fields are "" when absent), else `{}`. */
function optional<Key extends string>(key: Key, value: string | undefined): { [K in Key]?: string } {
  return value === undefined || value === "" ? {} : ({ [key]: value } as { [K in Key]?: string });
}
