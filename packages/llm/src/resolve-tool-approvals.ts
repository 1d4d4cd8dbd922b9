import { isSkillboxError, SkillboxError, type SkillExecution, type SkillExecutor } from "@skillbox/core";
import type { ToolResult } from "./execute-tool-calls.js";
import { executionToolResult } from "./execution-tool-result.js";
import type { ToolApprovalDecision } from "./tool-approval.js";

/** Options of {@link resolveToolApprovals}. */
export interface ResolveToolApprovalsOptions {
  executor: SkillExecutor;
  /** The caller's owner id the calls ran as (default `public`): only its executions are decided. */
  apiKeyId?: string;
  /** Who decided, recorded with each decision that names nobody itself (default: `apiKeyId`). */
  by?: string;
  /** Stops waiting for approved executions (`WAIT_ABORTED`); the decisions already made stand. */
  signal?: AbortSignal;
}

/**
 * Codes of a decision the execution no longer waits for: decided elsewhere (another approver,
 * `skillbox approve`, an earlier resume that failed half way) or expired. Its record then says
 * how the call ended, and that is the result — so resuming the same state twice is safe.
 */
const DECIDED_ELSEWHERE: ReadonlySet<string> = new Set(["APPROVAL_NOT_PENDING", "APPROVAL_EXPIRED"]);

function invalid(field: string, message: string): SkillboxError {
  return new SkillboxError("INPUT_INVALID", `${field} ${message}`);
}

interface Match {
  index: number;
  decision: ToolApprovalDecision;
  by: string;
}

/** Checks every decision before any is applied, so bad input changes nothing. */
function matchDecisions(
  results: ToolResult[],
  decisions: ToolApprovalDecision[],
  options: ResolveToolApprovalsOptions,
): Match[] {
  if (!Array.isArray(decisions))
    throw invalid("decisions", "must be an array of { executionId | toolCallId, approved }");
  const matches = new Map<number, Match>();
  decisions.forEach((decision, position) => {
    const field = `decisions[${position}]`;
    if (typeof decision !== "object" || decision === null) throw invalid(field, "must be an object");
    if (typeof decision.approved !== "boolean") throw invalid(`${field}.approved`, "must be true or false");
    const { executionId, toolCallId } = decision;
    if (typeof executionId !== "string" && typeof toolCallId !== "string") {
      throw invalid(field, "must name the call with `executionId` or `toolCallId`");
    }
    const by = decision.by ?? options.by ?? options.apiKeyId ?? "public";
    if (typeof by !== "string" || by.trim() === "")
      throw invalid(`${field}.by`, "must be a non-empty string");
    if (decision.reason !== undefined && typeof decision.reason !== "string") {
      throw invalid(`${field}.reason`, "must be a string");
    }
    const index = results.findIndex(
      (result) =>
        (executionId === undefined || result.executionId === executionId) &&
        (toolCallId === undefined || result.call.id === toolCallId),
    );
    const named = executionId === undefined ? `tool call "${toolCallId}"` : `execution "${executionId}"`;
    if (index === -1) {
      throw new SkillboxError(
        "TOOL_APPROVAL_NOT_FOUND",
        `${field} names ${named}, which is no call of these results; decide the calls listed in pendingApprovals`,
        { data: { executionId, toolCallId } },
      );
    }
    if ((results[index] as ToolResult).approval === undefined || matches.has(index)) {
      throw new SkillboxError(
        "TOOL_APPROVAL_NOT_PENDING",
        `${field} names ${named}, which ${matches.has(index) ? "an earlier decision already decides" : "does not await approval"}; give one decision per pending approval`,
        { data: { executionId, toolCallId } },
      );
    }
    matches.set(index, { index, decision, by });
  });
  const missing = results.filter((result, index) => result.approval !== undefined && !matches.has(index));
  if (missing.length > 0) {
    throw new SkillboxError(
      "TOOL_APPROVAL_MISSING",
      `no decision for ${missing.map((result) => `tool call "${result.call.id}" (execution ${result.executionId})`).join(", ")}; give one decision per pending approval`,
      { data: { toolCallIds: missing.map((result) => result.call.id) } },
    );
  }
  return [...matches.values()];
}

/**
 * Answers the calls of `results` (from `executeToolCalls`) that await approval with a person's
 * decisions, one per pending call, and resolves with all results in order, the pending ones
 * replaced by their outcome:
 *
 * - approved: `executor.approve(id, { by, input, comment: reason })`, then the execution runs
 *   (in the executor's background queue) and its result is the call's result;
 * - rejected: `executor.reject(id, { by, reason })` — the execution ends `rejected` and the
 *   call's result is that failure (`APPROVAL_REJECTED`), which tells the model it was refused.
 *
 * A decision naming no call of `results` is `TOOL_APPROVAL_NOT_FOUND`, one for a call that does
 * not wait (or a second one for the same call) `TOOL_APPROVAL_NOT_PENDING`, a pending call
 * without one `TOOL_APPROVAL_MISSING`: all thrown before anything is decided. An execution
 * decided elsewhere meanwhile (or expired) keeps that decision; its record is the result.
 */
export async function resolveToolApprovals(
  results: ToolResult[],
  decisions: ToolApprovalDecision[],
  options: ResolveToolApprovalsOptions,
): Promise<ToolResult[]> {
  const matches = matchDecisions(results, decisions, options);
  const { executor } = options;
  const apiKeyId = options.apiKeyId ?? "public";
  const decided = new Map<number, SkillExecution | undefined>();
  // Decided one by one, in the order given: each decision is one audited write.
  for (const { index, decision, by } of matches) {
    const id = (results[index] as ToolResult).executionId as string;
    try {
      if (decision.approved) {
        await executor.approve(id, {
          by,
          apiKeyId,
          ...(decision.input === undefined ? {} : { input: decision.input }),
          ...(decision.reason === undefined ? {} : { comment: decision.reason }),
        });
        decided.set(index, undefined);
      } else {
        const record = await executor.reject(id, {
          by,
          apiKeyId,
          ...(decision.reason === undefined ? {} : { reason: decision.reason }),
        });
        decided.set(index, record);
      }
    } catch (error) {
      if (!isSkillboxError(error) || !DECIDED_ELSEWHERE.has(error.code)) throw error;
      decided.set(index, undefined);
    }
  }
  const finished = await Promise.all(
    [...decided].map(async ([index, record]) => {
      const result = results[index] as ToolResult;
      const final =
        record ??
        (await executor.wait(result.executionId as string, {
          apiKeyId,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
        }));
      return [index, executionToolResult(result.call, final)] as const;
    }),
  );
  const outcomes = new Map(finished);
  return results.map((result, index) => outcomes.get(index) ?? result);
}
