import { type CallerError, executionFailure, type SkillExecution, toCallerError } from "@skillbox/core";
import type { ToolResult } from "./execute-tool-calls.js";
import type { ToolCall } from "./tool-call.js";

/** Reason shown when a record awaits approval without saying why (a row of another writer). */
const UNSTATED_REASON = "this skill needs approval before it runs";

/** A failed result: what a model reads is what any other caller gets — the caller view, never the stack. */
export function failedToolResult(
  call: ToolCall,
  error: CallerError,
  executionId?: string,
  skill?: string,
): ToolResult {
  const view = toCallerError(error, skill === undefined ? {} : { skill });
  const result: ToolResult = { call, handled: true, ok: false, error: view };
  if (executionId !== undefined) result.executionId = executionId;
  return result;
}

/**
 * The result of a call from its execution's record: the output, the failure, or — for a record
 * at `awaiting_approval` — the approval request (no result for the model yet).
 */
export function executionToolResult(call: ToolCall, execution: SkillExecution): ToolResult {
  const skill = `${execution.skillName}@${execution.skillVersion}`;
  if (execution.status === "awaiting_approval") {
    return {
      call,
      handled: true,
      ok: false,
      executionId: execution.id,
      approval: {
        toolCallId: call.id,
        toolName: call.name,
        executionId: execution.id,
        skill,
        reason: execution.approval?.reason ?? UNSTATED_REASON,
        input: execution.input,
        expiresAt: execution.approval?.expiresAt ?? null,
      },
    };
  }
  const error = executionFailure(execution);
  if (error === undefined) {
    return { call, handled: true, ok: true, output: execution.output, executionId: execution.id };
  }
  return failedToolResult(call, error, execution.id, skill);
}
