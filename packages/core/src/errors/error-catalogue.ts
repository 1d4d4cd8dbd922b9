import type { ExecutionFailureStatus } from "../types.js";
import { defineErrorCodes, type ErrorCodeOf } from "./define-error-codes.js";

/**
 * Every error code core, its runtimes and the built-in skills raise, with its one line of
 * documentation, its default retryability and the execution status it ends with. The code union
 * {@link SkillboxErrorCode}, `SkillboxError`'s default `retryable` and the executor's status
 * all come from this table; the core README lists it (a test keeps the two equal).
 */
export const SKILLBOX_ERROR_CATALOGUE = defineErrorCodes({
  SKILL_NOT_FOUND: {
    description: "No skill visible to the caller matches the name or version range.",
    retryable: false,
  },
  SKILL_REFERENCE_INVALID: {
    description: "A `name@range` reference is empty, or its range is not semver.",
    retryable: false,
  },
  SKILL_DISABLED: { description: "The resolved skill exists but is disabled.", retryable: false },
  HANDLER_NOT_FOUND: {
    description: "The skill's handler reference is not registered with the executor.",
    retryable: false,
  },
  RUNTIME_NOT_FOUND: {
    description: "The skill asks for a runtime the executor does not have.",
    retryable: false,
  },
  INPUT_INVALID: {
    description: "The input breaks the skill's input schema, or nests deeper than `maxNestingDepth`.",
    retryable: false,
  },
  OUTPUT_INVALID: {
    description: "The output breaks the skill's output schema, or nests deeper than `maxNestingDepth`.",
    retryable: false,
  },
  REGISTRATION_INVALID: { description: "`register()` got a malformed skill definition.", retryable: false },
  MANIFEST_INVALID: { description: "A skill or interceptor manifest file is malformed.", retryable: false },
  HANDLER_INVALID: { description: "A handler module fails to load or exports no handler.", retryable: false },
  REQUIREMENTS_UNMET: {
    description: "A package's `requires` names skills that are not registered.",
    retryable: false,
  },
  TIMEOUT: {
    description:
      "An attempt or the overall deadline ran out (status `timeout`); thrown, not recorded, when a repeat of an idempotency key gave up waiting for a first execution still running past every timeout its skill allows.",
    status: "timeout",
  },
  CANCELLED: {
    description: "The caller's signal aborted the execution (status `cancelled`).",
    retryable: false,
    status: "cancelled",
    recoverable: false,
  },
  DENIED: {
    description: "An interceptor refused the execution (status `denied`).",
    retryable: false,
    status: "denied",
    recoverable: false,
  },
  INTERCEPTOR_FAILED: { description: "An interceptor threw unexpectedly.", retryable: false },
  INTERCEPTOR_UNAVAILABLE: {
    description:
      "An interceptor plugin failed to load, so the executions it would guard are refused (status `denied`) until it loads: it fails closed.",
    retryable: false,
    status: "denied",
    recoverable: false,
  },
  HANDLER_ERROR: {
    description:
      "The handler threw something that is not a `SkillboxError` (`data.cause.code` keeps a plain error's `code`).",
  },
  CALL_DEPTH_EXCEEDED: { description: "Nested `ctx.call` went deeper than allowed.", retryable: false },
  UNDECLARED_DEPENDENCY: {
    description: "`ctx.call` reached a skill (or version) its caller's `requires` does not declare.",
    retryable: false,
  },
  IDEMPOTENCY_CONFLICT: {
    description: "An idempotency key was reused for a different skill or a different input.",
    retryable: false,
  },
  EXECUTION_NOT_FOUND: {
    description:
      "No execution with that id is visible to the caller (it does not exist, or another owner's).",
    retryable: false,
  },
  EXECUTION_FINISHED: {
    description:
      "The execution has ended already, so it cannot be cancelled (`data.status` says how it ended).",
    retryable: false,
  },
  APPROVAL_REQUIRED: {
    description:
      "Asked for by `requireApproval()`, a skill's `approval`, or a `defineSkill` predicate: the execution stops at `awaiting_approval` until approved. Never a final code.",
    retryable: false,
    recoverable: false,
  },
  APPROVAL_NOT_PENDING: {
    description:
      "An approval or rejection of an execution that is not awaiting one: decided already, finished, or never asked (`data.status`).",
    retryable: false,
  },
  APPROVAL_REJECTED: {
    description: "A person rejected the execution (status `rejected`); the record names who and why.",
    retryable: false,
    status: "rejected",
    recoverable: false,
  },
  APPROVAL_EXPIRED: {
    description: "Nobody decided before the approval's deadline (status `rejected`).",
    retryable: false,
    status: "rejected",
    recoverable: false,
  },
  WAIT_TIMEOUT: {
    description:
      "`wait()` gave up before the execution ended; `data.execution` is its record then. The execution goes on.",
    retryable: false,
  },
  WAIT_ABORTED: {
    description: "The signal of a `wait()` or `events()` aborted it. The execution goes on.",
    retryable: false,
  },
  INTERRUPTED: {
    description:
      "The host running the execution stopped before it finished; recovery marks its row `interrupted` with this code.",
  },
  OUT_OF_MEMORY: { description: "A worker or sandbox ran out of the memory it was given." },
  WORKER_EXITED: {
    description:
      "A worker skill ended its thread (`process.exit()` in the handler); the thread is replaced, the error not retried (it would exit again).",
    retryable: false,
  },
  BUSY: { description: "The executor is closed or draining, or a pool has no room for the execution." },
  RATE_LIMITED: { description: "A service or a guard asks the caller to slow down." },
  SANDBOX_FAILED: { description: "A container sandbox could not start, or ended without a result." },
  SANDBOX_UNAVAILABLE: {
    description: "No container engine or sandbox tool is installed (or the one asked for is missing).",
    retryable: false,
  },
  SANDBOX_CONFIG_INVALID: {
    description: "A sandbox configuration field is malformed, or the provider cannot enforce it.",
    retryable: false,
  },
  DATABASE_ERROR: {
    description:
      "The database (the SQLite file, or the PostgreSQL server of a shared record) failed a statement.",
  },
  URL_REFUSED: {
    description: "A URL's scheme, host or resolved address is not allowed (SSRF guard, host allowlists).",
    retryable: false,
  },
  REQUEST_REFUSED: {
    description: "A request breaks the skill's policy, such as a method outside the allowlist.",
    retryable: false,
  },
  PATH_REFUSED: {
    description:
      "A workspace path is absolute, climbs out with `..` or a symlink, or names a sensitive file.",
    retryable: false,
  },
  FILE_NOT_FOUND: { description: "A workspace file or folder does not exist.", retryable: false },
  SIZE_LIMIT_EXCEEDED: {
    description: "A response, file or payload is larger than the configured cap.",
    retryable: false,
  },
  UPSTREAM_ERROR: {
    description:
      "A remote service answered with an error; retried only when the service may recover (5xx, network).",
  },
  BROWSER_UNAVAILABLE: { description: "No Chromium at the configured path.", retryable: false },
  ELEMENT_NOT_FOUND: {
    description: "A page has no element matching a selector the skill was asked to use.",
    retryable: false,
  },
  LANGUAGE_UNAVAILABLE: {
    description: "The sandbox image has no interpreter for the requested language.",
    retryable: false,
  },
  CONFIG_INVALID: {
    description: "A built-in's settings (an environment variable or a factory option) are malformed.",
    retryable: false,
  },
  QUEUE_EVICTING: {
    description:
      "The Redis of the queue (`SKILLBOX_QUEUE`) may evict keys, which loses jobs: set `maxmemory-policy noeviction`.",
  },
  QUEUE_UNAVAILABLE: { description: "The Redis of the queue (`SKILLBOX_QUEUE`) did not answer." },
  STORE_UNAVAILABLE: {
    description:
      "The shared database of executions (PostgreSQL, `SKILLBOX_DB`) cannot be reached; the message names its host and port.",
  },
  DEADLINE_EXCEEDED: {
    description:
      "A queued execution's deadline passed before a worker could start it (status `timeout`); it never ran.",
    retryable: false,
    status: "timeout",
  },
  SKILL_VERSION_MISMATCH: {
    description:
      "The worker that took the execution loaded other code for the skill (another content hash) than the host that submitted it.",
    retryable: false,
  },
});

/**
 * Every error code core, its runtimes and the built-in skills raise (see
 * {@link SKILLBOX_ERROR_CATALOGUE} for what each means). Callers branch on `error.code`, never
 * on message text. Handlers may throw codes of their own: `SkillboxError` takes any string.
 */
export type SkillboxErrorCode = ErrorCodeOf<typeof SKILLBOX_ERROR_CATALOGUE>;

// Maps, not lookups on the table: a code such as "constructor" must not find Object.prototype.
const NEVER_RETRIED: ReadonlySet<string> = new Set(
  Object.entries(SKILLBOX_ERROR_CATALOGUE)
    .filter(([, definition]) => "retryable" in definition && definition.retryable === false)
    .map(([code]) => code),
);

const STATUS_BY_CODE: ReadonlyMap<string, ExecutionFailureStatus> = new Map(
  Object.entries(SKILLBOX_ERROR_CATALOGUE).flatMap(([code, definition]) =>
    "status" in definition ? [[code, definition.status] as const] : [],
  ),
);

const UNRECOVERABLE: ReadonlySet<string> = new Set(
  Object.entries(SKILLBOX_ERROR_CATALOGUE)
    .filter(([, definition]) => "recoverable" in definition && definition.recoverable === false)
    .map(([code]) => code),
);

/** Whether core's catalogue lists `code`. */
export function isSkillboxErrorCode(code: string): code is SkillboxErrorCode {
  return Object.hasOwn(SKILLBOX_ERROR_CATALOGUE, code);
}

/** Whether an error with `code` is retried by default: every code but those the catalogue marks not retried. */
export function isRetriedByDefault(code: string): boolean {
  return !NEVER_RETRIED.has(code);
}

/** The status an execution ends with when an error with `code` ends it: `error` unless the catalogue says otherwise. */
export function executionStatusForCode(code: string): ExecutionFailureStatus {
  return STATUS_BY_CODE.get(code) ?? "error";
}

/** Whether an `onError` hook may turn an error with `code` into an output: not for a refusal or a cancellation. */
export function isRecoverableCode(code: string): boolean {
  return !UNRECOVERABLE.has(code);
}
