import { scrubHostPaths } from "./scrub-host-paths.js";

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

/**
 * Codes that describe the host's configuration, not the call: a handler module that does not
 * load, a manifest that does not parse, a runtime or interceptor that is missing. Their messages
 * name the host's files and carry Node's "Require stack"; the operator reads them in the audit
 * row and the host's log, and callers get the code with a fixed message naming the skill (or the
 * interceptor) instead. Each maps to that message and the data keys callers may still read.
 */
const HOST_CONFIGURATION_ERRORS: ReadonlyMap<
  string,
  { message(subject: string): string; dataKeys: readonly string[] }
> = new Map([
  [
    "HANDLER_INVALID",
    {
      message: (skill: string) => `${skill} could not load its handler; the host's log says why`,
      dataKeys: [],
    },
  ],
  [
    "HANDLER_NOT_FOUND",
    {
      message: (skill: string) => `${skill} has no handler on this host; the host's log says why`,
      dataKeys: [],
    },
  ],
  [
    "RUNTIME_NOT_FOUND",
    {
      message: (skill: string) => `${skill} needs a runtime this host does not have; the host's log says why`,
      dataKeys: [],
    },
  ],
  [
    "MANIFEST_INVALID",
    {
      message: (skill: string) =>
        `${skill} could not be loaded: a manifest is invalid; the host's log says why`,
      dataKeys: [],
    },
  ],
  [
    "REQUIREMENTS_UNMET",
    {
      message: (skill: string) => `${skill} needs skills this host has not loaded; the host's log says why`,
      dataKeys: [],
    },
  ],
  [
    "INTERCEPTOR_UNAVAILABLE",
    {
      message: (interceptor: string) =>
        `Interceptor "${interceptor}" failed to load, so the executions it guards are refused until it loads; the host's log says why`,
      dataKeys: ["interceptor"],
    },
  ],
]);

/** Options of {@link toCallerError}. */
export interface CallerErrorOptions {
  /**
   * The skill the error belongs to, as `name@version`: the fixed message of a host
   * configuration error names it (default "The skill").
   */
  skill?: string;
}

/** A copy of error data without host-only keys and host paths, at any depth; `__proto__` keys stay data. */
function withoutHostDetails(value: unknown, depth: number, serialised = false): unknown {
  if (typeof value === "string") return scrubHostPaths(value);
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

/** The caller's view of a host configuration error: the code, a fixed message and the safe data keys. */
function hostConfigurationView(
  error: CallerError,
  view: { message(subject: string): string; dataKeys: readonly string[] },
  options: CallerErrorOptions,
): CallerError {
  const data = error.data as Record<string, unknown> | undefined;
  const safe = Object.fromEntries(
    view.dataKeys
      .filter((key) => typeof data === "object" && data !== null && typeof data[key] === "string")
      .map((key) => [key, scrubHostPaths(data?.[key] as string)]),
  );
  // An interceptor's name, when it has none, is "interceptor at <its folder>": scrubbed above.
  const subject = typeof safe.interceptor === "string" ? safe.interceptor : (options.skill ?? "The skill");
  const caller: CallerError = { code: error.code, message: view.message(scrubHostPaths(subject)) };
  if (Object.keys(safe).length > 0) caller.data = safe;
  return caller;
}

/**
 * The caller's view of an error. Host configuration errors (`HANDLER_INVALID`,
 * `HANDLER_NOT_FOUND`, `RUNTIME_NOT_FOUND`, `MANIFEST_INVALID`, `REQUIREMENTS_UNMET`,
 * `INTERCEPTOR_UNAVAILABLE`) keep their code with a fixed message naming `options.skill` (or the
 * interceptor) and no data but the interceptor's name. Every other error keeps code, message and
 * data, with the host-only keys of the data ({@link HOST_ONLY_ERROR_KEYS}, such as the `stack` of a
 * `HANDLER_ERROR`) removed at any depth and the host's paths in the message and data strings
 * shortened to `…/<last segment>` (see {@link scrubHostPaths}). Every front (HTTP, MCP, A2A, LLM
 * tool results) answers errors through it; the audit row and the in-process `execute()` result
 * keep everything. Returns a new plain object.
 */
export function toCallerError(error: CallerError, options: CallerErrorOptions = {}): CallerError {
  const hostConfiguration = HOST_CONFIGURATION_ERRORS.get(error.code);
  if (hostConfiguration !== undefined) return hostConfigurationView(error, hostConfiguration, options);
  const message = scrubHostPaths(error.message);
  if (error.data === undefined) return { code: error.code, message };
  return { code: error.code, message, data: withoutHostDetails(error.data, 0) };
}
