/** The checks of the inputs of decisions, cancels and waits, and the errors they answer with. */
import { SkillboxError } from "../errors/skillbox-error.js";
import { isFinalExecutionStatus, type SkillExecution } from "../types.js";

/** Longest name of who decides an approval. */
const MAX_DECIDER_LENGTH = 200;
/** Longest reason, comment or cancel reason. */
export const MAX_REASON_LENGTH = 2000;

/** Whether a waiter stops at `execution`: it is final, or awaits approval and the waiter asked to stop there. */
export function isSettled(execution: SkillExecution, returnOnApproval: boolean | undefined): boolean {
  return (
    isFinalExecutionStatus(execution.status) ||
    (returnOnApproval === true && execution.status === "awaiting_approval")
  );
}

/** The `APPROVAL_NOT_PENDING` error of deciding `execution`, saying why it does not await a decision. */
export function notPending(
  id: string,
  execution: SkillExecution,
  action: "approve" | "reject",
): SkillboxError {
  const decided = execution.approval?.decision;
  const why =
    decided !== null && decided !== undefined
      ? `it was ${decided} already${execution.approval?.decidedBy ? ` by ${execution.approval.decidedBy}` : ""}`
      : isFinalExecutionStatus(execution.status)
        ? `it has ended (${execution.status})`
        : `it is ${execution.status}, not awaiting approval`;
  return new SkillboxError("APPROVAL_NOT_PENDING", `Cannot ${action} execution ${id}: ${why}`, {
    data: { status: execution.status, decision: decided ?? null },
  });
}

/** Who decides an approval: a non-empty name, trimmed; else `INPUT_INVALID` naming `by`. */
export function checkedDecider(action: string, by: unknown): string {
  if (typeof by !== "string" || by.trim() === "" || by.length > MAX_DECIDER_LENGTH) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `${action}: \`by\` must name who decides (a non-empty string of at most ${MAX_DECIDER_LENGTH} characters), got ${JSON.stringify(by)}`,
    );
  }
  return by.trim();
}

/** An optional text field of a decision or cancel, at most `max` characters; else `INPUT_INVALID` naming it. */
export function checkedText(action: string, field: string, value: unknown, max: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length > max) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `${action}: \`${field}\` must be a string of at most ${max} characters`,
    );
  }
  return value;
}

/** A call's `approvalTimeoutMs`: absent, or a positive whole number of ms; else `INPUT_INVALID`. */
export function checkApprovalTimeout(value: unknown): void {
  if (value === undefined) return;
  if (!(typeof value === "number" && Number.isInteger(value) && value > 0)) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `submit: \`approvalTimeoutMs\` must be a positive whole number of milliseconds, got ${JSON.stringify(value)}`,
    );
  }
}
