import { SkillboxError } from "../errors/skillbox-error.js";

/** An error as plain data, as it crosses a thread or process boundary. */
export interface SerializedError {
  name?: string;
  code?: string;
  message: string;
  stack?: string;
  data?: unknown;
  retryable?: boolean;
}

/** Rebuilds an error that ran elsewhere (a worker, a sandbox), keeping code, message, data and its stack. */
export function reviveError(error: SerializedError): Error {
  const revived =
    error.code !== undefined && error.name === "SkillboxError"
      ? new SkillboxError(error.code, error.message, {
          data: error.data,
          ...(error.retryable === undefined ? {} : { retryable: error.retryable }),
        })
      : Object.assign(new Error(error.message), { name: error.name ?? "Error", code: error.code });
  if (error.stack !== undefined) revived.stack = error.stack;
  return revived;
}
