import type { ExecutionClaim, FinalOutcome } from "@skillbox/core";
import { executionStatusForCode, isSkillboxError } from "@skillbox/core";
import type { ClaimedRun } from "./claimed-run.js";
import { errorMessage } from "./error-message.js";

/** The outcome of a run that threw: what its stop meant when it was stopped, else the error it threw. */
export function thrownOutcome(
  claim: ExecutionClaim,
  run: ClaimedRun,
  thrown: unknown,
  durationMs: number,
): FinalOutcome {
  const stop = run.stopKind;
  const reason = run.signal.reason as { message?: string } | undefined;
  const code =
    stop === "cancelled"
      ? "CANCELLED"
      : stop === "deadline"
        ? "TIMEOUT"
        : isSkillboxError(thrown)
          ? thrown.code
          : "HANDLER_ERROR";
  const message = stop !== undefined ? (reason?.message ?? code) : errorMessage(thrown);
  let dataJson: string | null = null;
  if (stop === undefined && isSkillboxError(thrown) && thrown.data !== undefined) {
    try {
      dataJson = JSON.stringify(thrown.data) ?? null;
    } catch {
      dataJson = null;
    }
  }
  return {
    status: executionStatusForCode(code),
    outputJson: null,
    error: { code, message, dataJson },
    attempts: claim.attempts + 1,
    durationMs,
    traceId: null,
    spanId: null,
  };
}
