import type { SerializedError } from "./serialize-error.js";
import { SkillboxError } from "./skillbox-error.js";

/**
 * Rebuilds an error that `serializeError` sent from elsewhere (a worker thread, a sandbox, the
 * host answering a worker's `ctx.call`), keeping code, message, data, retryable and its stack.
 * A `SkillboxError` comes back as one; a plain error keeps its name and `code` (`ECONNREFUSED`,
 * a library's own), which the executor reports to callers as `data.cause.code` of the
 * `HANDLER_ERROR`. The stack names the other side's files: it reaches the audit trail and the
 * host's log, never a caller (see `toCallerError`).
 *
 * Plain JavaScript once built, importing only `SkillboxError`: worker threads load the built
 * file directly (`worker/skill-worker.mjs`).
 */
export function reviveError(error: SerializedError): Error {
  const revived =
    typeof error.code === "string" && error.name === "SkillboxError"
      ? new SkillboxError(error.code, error.message, {
          data: error.data,
          ...(error.retryable === undefined ? {} : { retryable: error.retryable }),
        })
      : Object.assign(
          new Error(error.message),
          error.code === undefined
            ? { name: error.name ?? "Error" }
            : { name: error.name ?? "Error", code: error.code },
        );
  if (error.stack !== undefined) revived.stack = error.stack;
  return revived;
}
