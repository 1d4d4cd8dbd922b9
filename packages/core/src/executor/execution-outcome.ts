import { isSkillboxError, SkillboxError } from "../errors/skillbox-error.js";
import type { ExecutionStatus, Skill } from "../types.js";

/** The status an execution ends with for an error code (anything else is `error`). */
export const STATUS_BY_CODE: Record<string, ExecutionStatus> = {
  TIMEOUT: "timeout",
  CANCELLED: "cancelled",
  DENIED: "denied",
};

/** Any thrown value as a SkillboxError: coded errors pass, others become `HANDLER_ERROR`. */
export function toSkillboxError(thrown: unknown, skill: Skill): SkillboxError {
  if (isSkillboxError(thrown)) return thrown;
  if (thrown instanceof Error) {
    return new SkillboxError("HANDLER_ERROR", `${skill.name}@${skill.version}: ${thrown.message}`, {
      cause: thrown,
      data: { name: thrown.name, stack: thrown.stack },
    });
  }
  return new SkillboxError(
    "HANDLER_ERROR",
    `${skill.name}@${skill.version} threw a non-error value: ${String(thrown)}`,
  );
}

/** JSON for the audit trail; a value that cannot be serialised is stored as a note saying so. */
export function serialize(value: unknown): string | null {
  if (value === undefined) return null;
  try {
    return JSON.stringify(value) ?? null;
  } catch (error) {
    return JSON.stringify(`[not serialisable: ${(error as Error).message}]`);
  }
}
