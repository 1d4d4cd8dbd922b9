import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { executionFailure, type SkillExecution, toCallerError } from "@skillbox/core";
import { APPROVAL_META_KEY, EXECUTION_META_KEY, type SkillTool, STATUS_META_KEY } from "./skill-to-tool.js";

/**
 * The `_meta` key of a failed tool result holding the error as callers see it — `{ code, message,
 * data? }` through core's `toCallerError` (no stack), e.g. `data.cause.code` of a `HANDLER_ERROR`.
 */
const ERROR_META_KEY = "skillbox/error";

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function toJsonText(value: unknown): string {
  try {
    return JSON.stringify(value ?? null) ?? "null";
  } catch {
    // A value JSON cannot hold (a BigInt, a cycle) still deserves an answer the model can read.
    return String(value);
  }
}

/**
 * A tool result reporting a failure the model may act on: `isError: true` with the text
 * `CODE: message` (MCP keeps protocol errors for calls that never reached the tool).
 */
export function toolErrorResult(
  code: string,
  message: string,
  meta?: Record<string, unknown>,
): CallToolResult {
  const result: CallToolResult = { content: [{ type: "text", text: `${code}: ${message}` }], isError: true };
  if (meta !== undefined) result._meta = meta;
  return result;
}

/**
 * The tool result of a finished execution. Success: the output as JSON text, plus the output
 * itself as `structuredContent` when the tool advertised an `outputSchema` (as the spec asks,
 * the text repeats it for clients that ignore structured content). Any other status: a tool
 * error with the execution's error code and message, and the error's caller view under
 * {@link ERROR_META_KEY}. `_meta` carries the execution id and status so a client can find the
 * audit row.
 */
export function executionToToolResult(execution: SkillExecution, entry: SkillTool): CallToolResult {
  const meta: Record<string, unknown> = {
    [EXECUTION_META_KEY]: execution.id,
    [STATUS_META_KEY]: execution.status,
  };
  if (execution.status === "awaiting_approval") return awaitingApprovalResult(execution, entry, meta);
  const failure = executionFailure(execution);
  if (failure !== undefined) {
    const error = toCallerError(failure, { skill: `${execution.skillName}@${execution.skillVersion}` });
    meta[ERROR_META_KEY] = error;
    return toolErrorResult(error.code, error.message, meta);
  }
  const { output } = execution;
  const text = toJsonText(output);
  if (!entry.hasOutputSchema) return { content: [{ type: "text", text }], _meta: meta };
  if (!isPlainObject(output)) {
    // A client rejects a result without `structuredContent` once an outputSchema was advertised.
    return toolErrorResult(
      "OUTPUT_INVALID",
      `${execution.skillName}@${execution.skillVersion} returned ${text}, not the object its output schema describes`,
      meta,
    );
  }
  return { content: [{ type: "text", text }], structuredContent: output, _meta: meta };
}

/**
 * The answer for an execution stopped at `awaiting_approval`: it has not run, and a person — not
 * the model — approves or rejects it (`POST /api/executions/<id>/approve`, `skillbox approve
 * <id>`). The text says so and tells the model not to call again, which would only ask for a
 * second approval. `_meta` has the execution id, its status and the approval record;
 * `structuredContent` repeats them when the tool has no output schema. A tool with one gets
 * `isError: true` instead: a result that is not an error must then carry structured content of
 * the schema's shape, and clients reject one that does not.
 */
function awaitingApprovalResult(
  execution: SkillExecution,
  entry: SkillTool,
  meta: Record<string, unknown>,
): CallToolResult {
  const approval = execution.approval;
  const reason = approval?.reason ?? "the skill requires approval";
  const until = approval?.expiresAt == null ? "" : ` (until ${approval.expiresAt})`;
  const text =
    `Not run yet: ${execution.skillName}@${execution.skillVersion} needs a person's approval — ${reason}. ` +
    `Execution ${execution.id} waits for it${until} and runs once approved; its result is recorded ` +
    "with the execution. Do not call the tool again for this: tell the user it awaits approval.";
  meta[APPROVAL_META_KEY] = approval;
  const result: CallToolResult = { content: [{ type: "text", text }], _meta: meta };
  if (entry.hasOutputSchema) {
    result.isError = true;
    return result;
  }
  result.structuredContent = {
    status: execution.status,
    executionId: execution.id,
    reason,
    expiresAt: approval?.expiresAt ?? null,
  };
  return result;
}
