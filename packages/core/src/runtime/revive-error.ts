import { SkillboxError } from "../errors/skillbox-error.js";

/** An error as plain data, as it crosses a thread or process boundary. */
export interface SerializedError {
  name?: string;
  /** A string for Skillbox and Node codes; some libraries use numbers. */
  code?: string | number;
  message: string;
  stack?: string;
  data?: unknown;
  retryable?: boolean;
}

/**
 * Rebuilds an error that ran elsewhere (a worker, a sandbox), keeping code, message, data and its
 * stack. A plain error keeps its `code` (`ECONNREFUSED`, a library's own), which the executor
 * reports to callers as `data.cause.code` of the `HANDLER_ERROR`. The stack names the other
 * side's files: it reaches the audit trail and the host's log, never a caller (see `toCallerError`).
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
