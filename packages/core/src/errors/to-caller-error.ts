/** An error as callers see it: the shape of `ExecutionError` and `SkillboxError.toJSON()`. */
export interface CallerError {
  code: string;
  message: string;
  data?: unknown;
}

/**
 * Keys of error data that describe the host, not the failure: a stack names the host's files,
 * folders and line numbers. They stay in the audit trail and the host's log; callers never get them.
 */
export const HOST_ONLY_ERROR_KEYS: ReadonlySet<string> = new Set(["stack"]);

/** Error data nested deeper than this is cut: it could not be answered as JSON anyway. */
const MAX_DATA_DEPTH = 32;

/** A copy of error data without host-only keys, at any depth; `__proto__` keys stay data. */
function withoutHostDetails(value: unknown, depth: number, serialised = false): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DATA_DEPTH) return "[nested too deep]";
  // Once per value, as JSON.stringify does: a toJSON returning its own object must not loop.
  if (!serialised && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return withoutHostDetails((value as { toJSON(): unknown }).toJSON(), depth, true);
  }
  if (Array.isArray(value)) return value.map((item) => withoutHostDetails(item, depth + 1));
  // Object.fromEntries defines own properties: `copy[key] = …` would make a `__proto__` key the
  // copy's prototype and drop it from the JSON.
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !HOST_ONLY_ERROR_KEYS.has(key))
      .map(([key, item]) => [key, withoutHostDetails(item, depth + 1)]),
  );
}

/**
 * The caller's view of an error: code, message and data, with the host-only keys of the data
 * ({@link HOST_ONLY_ERROR_KEYS}, such as the `stack` of a `HANDLER_ERROR`) removed at any depth.
 * Every front (HTTP, MCP, A2A, LLM tool results) answers errors through it; the audit row and the
 * in-process `execute()` result keep everything. Returns a new plain object.
 */
export function toCallerError(error: CallerError): CallerError {
  if (error.data === undefined) return { code: error.code, message: error.message };
  return { code: error.code, message: error.message, data: withoutHostDetails(error.data, 0) };
}
