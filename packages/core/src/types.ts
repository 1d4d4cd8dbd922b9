import type { SkillboxErrorCode } from "./errors/skillbox-error.js";

/** A JSON Schema document (draft 2020-12 / draft-07 subset understood by Ajv). */
export type JsonSchema = Record<string, unknown>;

/** Owners whose skills every caller can see. */
export type GlobalOwner = "system" | "public";

/** How a skill's handler is run. `inline` is built in; other runtimes are registered by packages. */
export type SkillRuntimeName = "inline" | "worker" | "container" | (string & {});

/** Retry policy of a skill or of a single call. Delays grow as `initialDelayMs * backoffCoefficient^(attempt-1)`. */
export interface RetryPolicy {
  /** Total attempts including the first (1 = no retry). */
  maxAttempts: number;
  /** Delay before the second attempt, in ms. */
  initialDelayMs: number;
  /** Multiplier applied to the delay after each attempt. */
  backoffCoefficient: number;
  /** Upper bound of a single delay, in ms. */
  maxDelayMs: number;
  /** Random spread as a fraction of the delay (0 = none, 0.2 = ±20 %). */
  jitter: number;
  /** Error codes that are never retried in addition to the built-in ones. */
  nonRetryableCodes: string[];
}

/** Container sandbox settings of a skill (used by the container runtime). */
export interface SkillSandboxSettings {
  /** The image to run; handler skills without one use the runtime's default image. */
  image?: string;
  /** The command (input JSON on stdin, output JSON on stdout); omit it to run the skill's own handler. */
  command?: string[];
  memoryMb?: number;
  cpus?: number;
  pidsLimit?: number;
  /** Network access (default off). */
  network?: boolean;
  /** Sandboxes started ahead of time for this skill version, each taking one job (default 0). */
  warmPool?: number;
  [key: string]: unknown;
}

/**
 * Where a skill's code lives: written by the loader for skills it loads from packages, read by
 * every runtime that loads the handler module itself (worker threads, sandboxes). Handlers
 * registered by code (`registerHandler`, an inline `defineSkill`) have none.
 */
export interface SkillCode {
  /** Absolute path of the handler module to load (a snapshot of it for watched off-host skills). */
  modulePath: string;
  /** Hash of the package's files; a new hash means new code, so runtimes drop what they cached. */
  codeHash: string;
  /** Absolute path of the folder the code may reach: the package folder, or the bundle folder of a bundle member. */
  root: string;
}

/** An example that travels with a skill's manifest: `skillbox test` runs it, agent cards list it. */
export interface SkillExample {
  /** What the example shows, printed next to its result. */
  description?: string;
  /** The input the skill is called with. */
  input: unknown;
  /** When given, the output must equal it exactly; else only the output schema is checked. */
  output?: unknown;
}

/** A registered skill version as stored in the registry. */
export interface Skill {
  /** Stable id of this owner/name/version. */
  id: string;
  name: string;
  version: string;
  description: string;
  /** Owner id (`apiKeyId` in the reference). `system` and `public` are global. */
  apiKeyId: string;
  /** Both schemas together, as the reference names them. */
  schema: { input: JsonSchema; output?: JsonSchema };
  /** Handler reference: a name passed to `registerHandler`, or a loader-specific reference. */
  handler: string;
  runtime: SkillRuntimeName;
  /** Per-attempt timeout in ms; `undefined` means the executor default. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Memory limit in MiB for runtimes that can enforce one. */
  memoryMb?: number;
  sandbox?: SkillSandboxSettings;
  /** Other skills this one may call through `ctx.call` (name → semver range). */
  requires?: Record<string, string>;
  tags: string[];
  enabled: boolean;
  /** Where the skill was loaded from (a folder, a package), or `api`. */
  source: string;
  /** Hash of the definition, used by loaders to skip unchanged packages. */
  contentHash: string;
  /** Where the handler module lives; absent for handlers registered by code. */
  code?: SkillCode;
  /** The examples of the skill's manifest. */
  examples?: SkillExample[];
  /** `"required"`: every execution waits at `awaiting_approval` until a person approves it. */
  approval?: "required";
  /** How long an execution of this skill may wait for approval, in ms (else the executor's default). */
  approvalTimeoutMs?: number;
  /** Most background (queued) executions of this skill one host runs at once (else the host's per-skill limit). */
  concurrency?: number;
  /**
   * Safe to run again from the start: a submitted execution still running when its host died goes
   * back to `queued` instead of ending `interrupted` (default false).
   */
  idempotent?: boolean;
  /**
   * The queue its executions are dispatched to when hosts share work through a queue (default
   * `default`): for example `sandbox` for container skills, taken only by workers started with
   * `--queues sandbox` on hosts with a container engine. Ignored on one host.
   */
  queue?: string;
  /** Free-form metadata for loaders and runtimes. */
  metadata?: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/**
 * Every status an execution row can have, for validating filters (CLI flags, query strings).
 * `queued`, `awaiting_approval`, `pending` (rows of older versions) and `running` are under way;
 * the others are final.
 */
export const EXECUTION_STATUSES = [
  "queued",
  "awaiting_approval",
  "pending",
  "running",
  "success",
  "error",
  "timeout",
  "cancelled",
  "denied",
  "rejected",
  "interrupted",
] as const;

/** Status of an execution row. */
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** The statuses an execution ends with: once its row has one, nothing changes it again. */
export const FINAL_EXECUTION_STATUSES = [
  "success",
  "error",
  "timeout",
  "cancelled",
  "denied",
  "rejected",
  "interrupted",
] as const satisfies readonly ExecutionStatus[];

const FINAL_STATUS_SET: ReadonlySet<string> = new Set(FINAL_EXECUTION_STATUSES);

/** Whether `status` is final (see {@link FINAL_EXECUTION_STATUSES}). */
export function isFinalExecutionStatus(status: string): boolean {
  return FINAL_STATUS_SET.has(status);
}

/**
 * The error part of an execution record. Its code is one of the catalogues' (`SkillboxErrorCode`,
 * the fronts' tables) or, for a handler that throws a `SkillboxError` of its own, any string.
 */
export interface ExecutionError {
  code: SkillboxErrorCode | (string & {});
  message: string;
  data?: unknown;
}

/** The statuses of an execution under way: it has no final state yet. */
export type UnfinishedExecutionStatus = "queued" | "awaiting_approval" | "pending" | "running";

/** The statuses of an execution that ended without an output: every final status but `success`. */
export type ExecutionFailureStatus = Exclude<ExecutionStatus, UnfinishedExecutionStatus | "success">;

/** What a handler reports with `ctx.progress()`. */
export interface ProgressReport {
  /** How far the work is, in the unit of `total` (or any growing number without one). */
  progress: number;
  /** The value of `progress` at completion, when known. */
  total?: number;
  /** A short human-readable line (cut at 500 characters). */
  message?: string;
}

/** The latest progress of an execution, as stored on its row. */
export interface ExecutionProgress extends ProgressReport {
  /** When it was reported (ISO 8601). */
  at: string;
}

/** Why an execution waits for a person, and what was decided: part of the record. */
export interface ExecutionApproval {
  /** Why approval is needed, as the approver sees it. */
  reason: string;
  /** Who asked: `skill` (its manifest or `defineSkill`), `interceptor:<name>`, or `handler`. */
  requestedBy: string;
  requestedAt: string;
  /** When the request lapses (the execution then ends `rejected`, `APPROVAL_EXPIRED`); null for never. */
  expiresAt: string | null;
  /** Null while it waits. */
  decision: "approved" | "rejected" | "expired" | null;
  decidedBy: string | null;
  decidedAt: string | null;
  /** The reason of a rejection, or an approver's note. */
  comment: string | null;
  /** Whether the approver replaced the input (the new one was validated against the schema). */
  inputEdited: boolean;
}

/** The fields every execution record has, whatever its status. */
export interface ExecutionRecordFields {
  id: string;
  skillId: string;
  skillName: string;
  skillVersion: string;
  /** The caller's owner id. */
  apiKeyId: string;
  sessionId: string | null;
  parentExecutionId: string | null;
  idempotencyKey: string | null;
  input: unknown;
  attempts: number;
  /** Wall time in ms from start to the final state. */
  duration: number | null;
  /** The latest `ctx.progress()` report, if any. */
  progress: ExecutionProgress | null;
  /** The approval asked for and its decision, for executions that needed one. */
  approval: ExecutionApproval | null;
  /**
   * The OpenTelemetry trace the execution's `execute_tool` span belongs to (32 hex digits), and
   * that span's id (16): where the audit trail and the trace point at each other. Null when no
   * tracer recorded it (no OpenTelemetry SDK installed, or the trace was not sampled).
   */
  traceId: string | null;
  spanId: string | null;
  createdAt: string;
  finishedAt: string | null;
}

/** An execution that ended with an output. */
export interface SucceededExecution<Output = unknown> extends ExecutionRecordFields {
  status: "success";
  /** What the handler (or a recovering interceptor) returned; `null` when it returned nothing. */
  output: Output | null;
  error: null;
}

/** An execution that ended without an output: it always says why, with a code. */
export interface FailedExecution extends ExecutionRecordFields {
  status: ExecutionFailureStatus;
  output: null;
  error: ExecutionError;
}

/** An execution that has not ended yet (queued, waiting for approval, running): no output, no error yet. */
export interface UnfinishedExecution extends ExecutionRecordFields {
  status: UnfinishedExecutionStatus;
  output: null;
  error: null;
}

/**
 * One row of the audit trail (`skill_executions`), discriminated on `status`: `success` carries
 * the output, every other final status an `error` with a code, one under way neither.
 */
export type SkillExecution<Output = unknown> =
  | SucceededExecution<Output>
  | FailedExecution
  | UnfinishedExecution;

/** Minimal structured logger handed to handlers and interceptors. */
export interface SkillLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Cleanup registered with {@link HostLifecycle.onClose}; a rejection is logged, never thrown from `close()`. */
export type HostCloseHandler = () => void | Promise<void>;

/**
 * The host's lifecycle as a handler sees it: where a skill registers the cleanup of resources it
 * keeps beyond one execution (a browser, a connection pool), so closing the host releases them
 * and the process can exit. Its identity is stable per host, so it can key a per-host record.
 */
export interface HostLifecycle {
  /**
   * Runs `handler` once when the host closes, after its last execution ended (at once when the host
   * has closed already). Registering the same function again is a no-op. Returns an unregister function.
   */
  onClose(handler: HostCloseHandler): () => void;
}

/** What a handler receives as its second argument. */
export interface SkillContext {
  /** Aborted on timeout, on the caller's cancellation, or when the overall deadline passes. */
  signal: AbortSignal;
  executionId: string;
  /** 1 for the first attempt. */
  attempt: number;
  apiKeyId: string;
  sessionId: string | null;
  skill: Skill;
  logger: SkillLogger;
  /** Runs another skill as a nested execution (recorded with this one as its parent) and returns its output. */
  call<Output = unknown>(reference: string, input: unknown): Promise<Output>;
  /**
   * Reports how far the work is: stored on the execution's row (the latest) and sent to every
   * subscriber of its events. Never throws: a malformed report is dropped with a log line.
   */
  progress(report: ProgressReport): void;
  /** The approval this execution was granted, on a run that needed one; else null. */
  approval: ExecutionApproval | null;
  /**
   * The trace-context headers of the span under way (`traceparent`, and `tracestate` when it has
   * one, with the W3C propagator), to send on an outbound request so the server's spans join this
   * execution's trace. `{}` when nothing is traced. A fresh object each call: add it to yours.
   */
  traceHeaders(): Record<string, string>;
  /**
   * The host running this execution, for cleanup of resources shared across executions. Present
   * in the host process (the inline runtime); absent in worker threads and containers, whose
   * resources end with the thread or the sandbox.
   */
  hostLifecycle?: HostLifecycle;
}

/** A skill implementation. */
// biome-ignore lint/suspicious/noExplicitAny: untyped handlers read fields of their input, as in the reference example.
export type SkillHandler<Input = any, Output = unknown> = (
  input: Input,
  context: SkillContext,
) => Output | Promise<Output>;

/** Per-call options of `execute()`. */
export interface ExecuteOptions {
  /** The caller's owner id; defaults to `public`. */
  apiKeyId?: string;
  sessionId?: string;
  signal?: AbortSignal;
  /**
   * Per-attempt timeout in ms. It can only lower the limit: the attempt runs for the smaller of this
   * and the skill's own `timeoutMs` (else the executor's default), within the operator's ceiling.
   */
  timeoutMs?: number;
  /**
   * Overall deadline across all attempts and delays, in ms. When the executor has a
   * `defaultTotalTimeoutMs`, this can only lower it.
   */
  totalTimeoutMs?: number;
  /** Retries after the first attempt (the reference's `maxRetries`); shorthand for `retry.maxAttempts - 1`. */
  maxRetries?: number;
  /** Retry policy override for this call. */
  retry?: Partial<RetryPolicy>;
  /**
   * A second call with the same key and owner returns the stored execution instead of running
   * again (the same skill and input, else `IDEMPOTENCY_CONFLICT`); while the first still runs, it
   * waits for it — until `signal` or `waitSignal` aborts, or with `TIMEOUT` once the first has
   * outlived every timeout its skill allows.
   */
  idempotencyKey?: string;
  /**
   * Ends this call's wait for an execution with the same idempotency key that another call
   * started (say, its client went away). Unlike `signal`, it never cancels an execution, this
   * call's own included: what a front passes for a request that sent an idempotency key.
   */
  waitSignal?: AbortSignal;
  /** Set by `ctx.call`; links the nested execution to its parent. */
  parentExecutionId?: string;
  /** How long this execution may wait for approval, in ms (else the skill's, else the executor's). */
  approvalTimeoutMs?: number;
  /**
   * The id a model gave this tool call (the LLM adapters pass it): the `gen_ai.tool.call.id` of
   * the execution's span. Default: the execution id.
   */
  toolCallId?: string;
  /**
   * Told of each progress report of this execution as the handler makes it (in order, in this
   * process): what a front streams to its caller. A throw is logged, never the handler's failure.
   */
  onProgress?(progress: ExecutionProgress, executionId: string): void;
}

/** Options of `submit()`: those of `execute()` but the signals, since the caller does not wait. */
export type SubmitOptions = Omit<
  ExecuteOptions,
  "signal" | "waitSignal" | "parentExecutionId" | "onProgress"
>;
