import { isSkillboxError, SkillboxError } from "../errors/skillbox-error.js";
import type { Skill } from "../types.js";

/** How many `cause` links {@link describeCause} follows: enough for `fetch failed` → `ECONNREFUSED`. */
const MAX_CAUSE_DEPTH = 4;

/** What a caller may learn of a thrown error and its causes: the name and `code` of each, never messages. */
export interface CauseDescription {
  name: string;
  code?: string | number;
  cause?: CauseDescription;
}

/**
 * The name and code of an error and of its `cause` chain, or undefined when no link has a code —
 * then the name alone says it all. Messages stay out: a Node or driver message often names a
 * host path or an internal address (`connect ECONNREFUSED 10.0.0.7:5432`).
 */
function describeCause(error: Error, depth = 0): CauseDescription | undefined {
  const code = (error as { code?: unknown }).code;
  const inner =
    error.cause instanceof Error && depth + 1 < MAX_CAUSE_DEPTH
      ? describeCause(error.cause, depth + 1)
      : undefined;
  const hasCode = typeof code === "string" || typeof code === "number";
  if (!hasCode && inner === undefined) return undefined;
  const description: CauseDescription = { name: error.name };
  if (hasCode) description.code = code;
  if (inner !== undefined) description.cause = inner;
  return description;
}

/**
 * Any thrown value as a SkillboxError: coded errors pass, others become `HANDLER_ERROR` with
 * `data: { name, stack, cause? }`. `cause` keeps the `code` of a plain error (Node's
 * `ECONNREFUSED`, a library's own) and of its causes, where callers can branch on it; `stack` is
 * for the audit trail and the host's log only — `toCallerError` removes it from every answer.
 */
export function toSkillboxError(thrown: unknown, skill: Skill): SkillboxError {
  if (isSkillboxError(thrown)) return thrown;
  if (thrown instanceof Error) {
    const cause = describeCause(thrown);
    return new SkillboxError("HANDLER_ERROR", `${skill.name}@${skill.version}: ${thrown.message}`, {
      cause: thrown,
      data:
        cause === undefined
          ? { name: thrown.name, stack: thrown.stack }
          : { name: thrown.name, cause, stack: thrown.stack },
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
