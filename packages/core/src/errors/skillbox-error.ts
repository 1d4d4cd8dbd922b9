/**
 * Every error code Skillbox raises. Callers branch on `error.code`, never on message text.
 *
 * - `SKILL_NOT_FOUND` – no visible skill matches the name or version range.
 * - `SKILL_REFERENCE_INVALID` – a `name@range` reference is empty or its range is not semver.
 * - `SKILL_DISABLED` – the resolved skill exists but is disabled.
 * - `HANDLER_NOT_FOUND` – the skill's handler reference is not registered with the executor.
 * - `RUNTIME_NOT_FOUND` – the skill asks for a runtime the executor does not have.
 * - `INPUT_INVALID` / `OUTPUT_INVALID` – schema validation failed, or the value nests deeper than `maxNestingDepth` (never retried).
 * - `REGISTRATION_INVALID` – `register()` got a malformed skill definition.
 * - `MANIFEST_INVALID` – a skill or interceptor manifest file is malformed.
 * - `HANDLER_INVALID` – a handler module fails to load or exports no handler.
 * - `REQUIREMENTS_UNMET` – a package's `requires` names skills that are not registered.
 * - `TIMEOUT` – an attempt or the overall deadline ran out; thrown (not recorded) when a repeat of an
 *   idempotency key gave up waiting for the first execution, still running past every timeout its skill allows.
 * - `CANCELLED` – the caller's signal aborted the execution (never retried).
 * - `DENIED` – an interceptor refused the execution (never retried).
 * - `INTERCEPTOR_FAILED` – an interceptor threw unexpectedly.
 * - `INTERCEPTOR_UNAVAILABLE` – an interceptor plugin failed to load (its module, its factory or its manifest), so the executions it would guard are refused (status `denied`, never retried) until it loads: it fails closed.
 * - `HANDLER_ERROR` – the handler threw something that is not a `SkillboxError` (`data.cause.code` keeps a plain error's `code`).
 * - `CALL_DEPTH_EXCEEDED` – nested `ctx.call` went deeper than allowed.
 * - `UNDECLARED_DEPENDENCY` – `ctx.call` reached a skill (or version) its caller's `requires` does not declare.
 * - `IDEMPOTENCY_CONFLICT` – an idempotency key was reused for a different skill or a different input.
 * - `OUT_OF_MEMORY`, `BUSY`, `RATE_LIMITED`, `SANDBOX_FAILED` – used by runtimes and built-ins.
 * - `WORKER_EXITED` – a worker skill ended its thread (`process.exit()` in the handler); the thread is replaced (never retried: it would exit again).
 * - `SANDBOX_UNAVAILABLE` – no container engine or sandbox tool is installed (or the one asked for is missing).
 * - `SANDBOX_CONFIG_INVALID` – a sandbox configuration field is malformed or cannot be enforced by the provider.
 * - `DATABASE_ERROR` – the SQLite store failed.
 *
 * Codes of the built-in skills (and of skills written like them):
 * - `URL_REFUSED` – a URL's scheme, host or resolved address is not allowed (SSRF guard, host allowlists; never retried).
 * - `REQUEST_REFUSED` – a request breaks the skill's policy, such as a method outside the allowlist (never retried).
 * - `PATH_REFUSED` – a workspace path is absolute, climbs out with `..` or a symlink, or names a sensitive file (never retried).
 * - `FILE_NOT_FOUND` – a workspace file or folder does not exist (never retried).
 * - `SIZE_LIMIT_EXCEEDED` – a response, file or payload is larger than the configured cap (never retried).
 * - `UPSTREAM_ERROR` – a remote service answered with an error; retried only when the service may recover (5xx, network).
 * - `BROWSER_UNAVAILABLE` – no Chromium at the configured path (never retried).
 * - `ELEMENT_NOT_FOUND` – a page has no element matching a selector the skill was asked to use (never retried).
 * - `LANGUAGE_UNAVAILABLE` – the sandbox image has no interpreter for the requested language (never retried).
 * - `CONFIG_INVALID` – a built-in's settings (an environment variable or a factory option) are malformed (never retried).
 */
export type SkillboxErrorCode =
  | "SKILL_NOT_FOUND"
  | "SKILL_REFERENCE_INVALID"
  | "SKILL_DISABLED"
  | "HANDLER_NOT_FOUND"
  | "RUNTIME_NOT_FOUND"
  | "INPUT_INVALID"
  | "OUTPUT_INVALID"
  | "REGISTRATION_INVALID"
  | "MANIFEST_INVALID"
  | "HANDLER_INVALID"
  | "REQUIREMENTS_UNMET"
  | "TIMEOUT"
  | "CANCELLED"
  | "DENIED"
  | "INTERCEPTOR_FAILED"
  | "INTERCEPTOR_UNAVAILABLE"
  | "HANDLER_ERROR"
  | "CALL_DEPTH_EXCEEDED"
  | "UNDECLARED_DEPENDENCY"
  | "IDEMPOTENCY_CONFLICT"
  | "OUT_OF_MEMORY"
  | "WORKER_EXITED"
  | "BUSY"
  | "RATE_LIMITED"
  | "SANDBOX_FAILED"
  | "SANDBOX_UNAVAILABLE"
  | "SANDBOX_CONFIG_INVALID"
  | "DATABASE_ERROR"
  | "URL_REFUSED"
  | "REQUEST_REFUSED"
  | "PATH_REFUSED"
  | "FILE_NOT_FOUND"
  | "SIZE_LIMIT_EXCEEDED"
  | "UPSTREAM_ERROR"
  | "BROWSER_UNAVAILABLE"
  | "ELEMENT_NOT_FOUND"
  | "LANGUAGE_UNAVAILABLE"
  | "CONFIG_INVALID";

/** Options for {@link SkillboxError}. */
export interface SkillboxErrorOptions {
  /** The underlying error, kept for debugging. */
  cause?: unknown;
  /** Structured details (for example the list of schema violations). */
  data?: unknown;
  /** Overrides the default retry classification of the code. */
  retryable?: boolean;
}

const NEVER_RETRIED: ReadonlySet<string> = new Set([
  "INPUT_INVALID",
  "OUTPUT_INVALID",
  "REGISTRATION_INVALID",
  "MANIFEST_INVALID",
  "HANDLER_INVALID",
  "REQUIREMENTS_UNMET",
  "CANCELLED",
  "DENIED",
  "SKILL_NOT_FOUND",
  "SKILL_REFERENCE_INVALID",
  "SKILL_DISABLED",
  "HANDLER_NOT_FOUND",
  "RUNTIME_NOT_FOUND",
  "INTERCEPTOR_FAILED",
  "INTERCEPTOR_UNAVAILABLE",
  "CALL_DEPTH_EXCEEDED",
  "UNDECLARED_DEPENDENCY",
  "IDEMPOTENCY_CONFLICT",
  "WORKER_EXITED",
  "SANDBOX_UNAVAILABLE",
  "SANDBOX_CONFIG_INVALID",
  "URL_REFUSED",
  "REQUEST_REFUSED",
  "PATH_REFUSED",
  "FILE_NOT_FOUND",
  "SIZE_LIMIT_EXCEEDED",
  "BROWSER_UNAVAILABLE",
  "ELEMENT_NOT_FOUND",
  "LANGUAGE_UNAVAILABLE",
  "CONFIG_INVALID",
]);

/**
 * The one error class of Skillbox. `code` is stable and documented; `message` names
 * the thing that went wrong and how to fix it.
 *
 * Handlers may throw it with their own codes (any string) to control retries:
 * `throw new SkillboxError("RATE_LIMITED", "…", { retryable: true })`.
 */
export class SkillboxError extends Error {
  override readonly name = "SkillboxError";
  readonly code: SkillboxErrorCode | (string & {});
  readonly data: unknown;
  readonly retryable: boolean;

  constructor(code: SkillboxErrorCode | (string & {}), message: string, options: SkillboxErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = options.data;
    this.retryable = options.retryable ?? !NEVER_RETRIED.has(code);
  }

  /** A plain object safe to serialise into JSON (HTTP bodies, audit rows). */
  toJSON(): { code: string; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** Type guard for {@link SkillboxError}, also across module copies (checks the shape, not the prototype). */
export function isSkillboxError(value: unknown): value is SkillboxError {
  return (
    value instanceof SkillboxError ||
    (value instanceof Error &&
      value.name === "SkillboxError" &&
      typeof (value as { code?: unknown }).code === "string")
  );
}

/** Creates the error an interceptor throws to refuse an execution (status `denied`). */
export function deny(message: string, data?: unknown): SkillboxError {
  return new SkillboxError("DENIED", message, { data });
}
