/**
 * An error as plain data, as it crosses a thread or process boundary: a worker thread's result
 * and its answer to `ctx.call`, a container sandbox's result line. {@link serializeError} makes
 * it and `reviveError` turns it back into an error on the other side; nothing else builds one.
 */
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
 * `error` as plain data, to send across a thread or process boundary (structured clone would
 * drop `code`, `data` and `retryable`; JSON would drop the rest). Every field is one the other
 * side reads, of the type it reads: a field of another type (a function `code`, a symbol
 * `retryable`) would fail the send of the whole message, and lose the error. `data` that cannot
 * be cloned is left out. Anything thrown that is not an `Error` keeps only its text.
 *
 * Plain JavaScript once built, importing nothing: worker threads and container sandboxes load
 * the built file directly (`worker/handler-module.mjs`).
 */
export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: "Error", message: textOf(error) };
  const { name, code, message, stack, retryable } = error as Error & {
    code?: unknown;
    retryable?: unknown;
  };
  return {
    name: typeof name === "string" ? name : "Error",
    code: typeof code === "string" || typeof code === "number" ? code : undefined,
    message: typeof message === "string" ? message : textOf(message),
    stack: typeof stack === "string" ? stack : undefined,
    data: cloneableData((error as { data?: unknown }).data),
    retryable: typeof retryable === "boolean" ? retryable : undefined,
  };
}

/**
 * `value` as text; one with no way to say it (`Object.create(null)`, a throwing `toString`)
 * by its kind, so that describing a failure never fails itself.
 */
function textOf(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** A copy of `data` that can cross a boundary, or undefined when it cannot. */
function cloneableData(data: unknown): unknown {
  if (data === undefined) return undefined;
  try {
    return structuredClone(data);
  } catch {
    return undefined;
  }
}
