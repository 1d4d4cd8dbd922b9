import { performance } from "node:perf_hooks";
import { type Context, context as otelContext, ROOT_CONTEXT } from "@opentelemetry/api";
import { executionStatusForCode } from "../errors/error-catalogue.js";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { InterceptorChain } from "../interceptors/interceptor-chain.js";
import type { FinishFailureReport, InterceptorPass } from "../interceptors/interceptor-pass.js";
import { isPromiseLike } from "../is-promise-like.js";
import type { SkillRuntime } from "../runtime/skill-runtime.js";
import type { ExecutionSpan } from "../telemetry/execution-span.js";
import type { ExecutionTelemetry } from "../telemetry/execution-telemetry.js";
import { codeOf } from "../telemetry/mark-failed.js";
import type {
  ExecuteOptions,
  ExecutionApproval,
  ExecutionError,
  ExecutionProgress,
  ExecutionRecordFields,
  ExecutionStatus,
  ProgressReport,
  Skill,
  SkillExecution,
  SkillHandler,
} from "../types.js";
import type { ActiveRuns } from "./active-runs.js";
import { createExecutionId } from "./create-execution-id.js";
import { ExecutionContext } from "./execution-context.js";
import { toSkillboxError } from "./execution-outcome.js";
import type { ExecutionPort } from "./execution-port.js";
import type { ExecutionSink } from "./execution-sink.js";
import { ExecutionState } from "./execution-state.js";
import type { ExecutionStore } from "./execution-store.js";
import type { ExecutionTimeouts } from "./execution-timeouts.js";
import { findOverDeepPath } from "./find-over-deep-path.js";
import { formatTimestamp } from "./format-timestamp.js";
import type { HostShutdown } from "./host-shutdown.js";
import type { LazyAbortSignal } from "./lazy-abort-signal.js";
import type { AttemptCancellation } from "./run-attempt.js";
import { RunCancellation } from "./run-cancellation.js";
import { type RetriedRun, runWithRetries } from "./run-with-retries.js";
import type { SchemaValidator } from "./schema-validator.js";

/** Events an execution reports to the executor's listeners. */
export type ExecutionEvent = "started" | "finished";

/**
 * What every execution of one executor shares: where it records, validates, finds runtimes and
 * handlers, and whom it tells. Built once by the executor; an {@link ExecutionRun} sees nothing else.
 */
export interface ExecutionServices {
  store: ExecutionStore;
  validator: SchemaValidator;
  timeouts: ExecutionTimeouts;
  interceptors: InterceptorChain;
  shutdown: HostShutdown;
  /** What handlers and interceptors reach through their context. */
  port: ExecutionPort;
  /** Deepest nesting of objects and arrays accepted in an input or output. */
  maxNestingDepth: number;
  /** The runtime `skill.runtime` names; throws `RUNTIME_NOT_FOUND` when the executor has none. */
  runtimeFor(skill: Skill): SkillRuntime;
  resolveHandler(skill: Skill): SkillHandler | Promise<SkillHandler>;
  /** Whether anyone listens to `event`: the record is copied for `started` only then. */
  listening(event: ExecutionEvent): boolean;
  notify(event: ExecutionEvent, execution: SkillExecution): void;
  reportFinishFailure: FinishFailureReport;
  /** The runs under way in this process, by execution id: what `cancel(id)` finds. */
  running: ActiveRuns<ExecutionRun>;
  /** Where an execution's life beyond the fast path goes: events, progress, approvals. */
  durable: DurableSide;
  /** Where the executions of this host record what becomes of them (see `LocalAuditSink`). */
  sink: ExecutionSink;
  /** Its spans and metrics. */
  telemetry: ExecutionTelemetry;
}

/** What an execution run tells the durable side of the executor (see `DurableExecutions`). */
export interface DurableSide {
  /** Whether anything in this process follows the events of execution `id`: else `started` is not called. */
  follows(id: string): boolean;
  /** The `running` row is committed. */
  started(execution: SkillExecution): void;
  /** A progress report was taken: publish it, store it (throttled). */
  progress(run: ExecutionRun, progress: ExecutionProgress): void;
  /** The run ends: what it reported last is stored before its final row. */
  settleProgress(run: ExecutionRun): void;
  /** The execution stops to wait for approval: write it; returns the record as it then stands. */
  paused(run: ExecutionRun, pause: ExecutionPause): SkillExecution;
  /** The final row is committed. */
  finished(execution: SkillExecution): void;
  /** How long the approval of `skill` may wait, in ms (null for ever). */
  approvalTimeoutMs(skill: Skill, options: ExecuteOptions): number | null;
}

/** An execution stopping at `awaiting_approval`. */
export interface ExecutionPause {
  rowid: number;
  approval: ExecutionApproval;
  /** The caller's input as it will run again once approved. */
  input: unknown;
  attempts: number;
  /** How long the approval may wait, in ms (null for ever): `approval.expiresAt` is this after `requestedAt`. */
  approvalTimeoutMs: number | null;
}

/** An execution picked up from the queue: its row exists and is `running` for this runner. */
export interface ResumedExecution {
  id: string;
  rowid: number;
  /** The row's `created_at`, in ms. */
  createdAt: number;
  /** Attempts made by earlier runs of this execution. */
  attempts: number;
  approval: ExecutionApproval | null;
  sessionId: string | null;
  idempotencyKey: string | null;
  /** Whether the skill may run it again after a crash (stored with the job). */
  rerunnable: boolean;
}

/** What {@link ExecutionRun} runs. */
export interface ExecutionRequest {
  skill: Skill;
  input: unknown;
  options: ExecuteOptions;
  /** The caller's owner id. */
  caller: string;
  /** 0 for a top-level execution, parent's depth + 1 for `ctx.call`. */
  depth: number;
  /** `hashInput` of the input, stored for executions with an idempotency key. */
  inputHash: string | null;
  /** Set for an execution the queue runs: its row exists already. */
  resume?: ResumedExecution;
  /** A nested call's parent's granted approval: it covers the child. */
  inheritedApproval?: ExecutionApproval | null;
  /** Told once the `running` row is committed (a submit that starts at once answers then). */
  onCommitted?: (id: string) => void;
  /** Told once the final row (or the stop for approval) is committed, before anyone hears of it. */
  onSettled?: () => void;
  /** Writes the execution's job in the transaction of its `running` row (a submit of a skill safe to rerun). */
  runningJob?: ((id: string, createdAt: number) => void) | undefined;
  /**
   * The trace context the execution continues: the caller's active context when it called, or
   * the one a queued execution kept. Undefined when nothing is traced.
   */
  parentContext?: Context | undefined;
  /**
   * Where the run records what becomes of it; default the executor's own (`services.sink`, the
   * local audit trail). A dispatched run's hands its outcome back instead (see `runDispatched`).
   */
  sink?: ExecutionSink | undefined;
  /** What cancels the run in place of `options.signal` (see `RetriedRun.signalCancellation`). */
  signalCancellation?: AttemptCancellation | undefined;
}

/** How the phases between start and finish ended. */
interface Outcome {
  status: ExecutionStatus;
  output: unknown;
  error: ExecutionError | null;
  /** Set when the execution stops to wait for approval. */
  approval?: ExecutionApproval;
}

/** Longest progress message kept; longer ones are cut. */
const MAX_PROGRESS_MESSAGE = 500;

/** The record while it is built: its status and outcome change once, at the finish. */
export interface RecordUnderWay extends ExecutionRecordFields {
  status: ExecutionStatus;
  output: unknown;
  error: ExecutionError | null;
}

/**
 * One execution, from its `running` row to its final one. It owns what the execution is made of
 * — the skill, the call's options, the caller and depth, its interceptor pass, its timings, its
 * attempts and its record — and runs its phases in order:
 *
 * 1. `start`: the audited input and the `running` row, committed before anything runs;
 * 2. `before` hooks, then input validation;
 * 3. the attempts (see `runWithRetries`), each one `attempt()` in a runtime;
 * 4. `after` hooks and output checks — or `onError` hooks when any of 2–4 failed;
 * 5. `finish`: the final row, committed before the record is returned, then `onFinish` hooks.
 *
 * Where 1 and 5 (and a pause, and progress) are recorded is its sink's (see `ExecutionSink`): the
 * local audit trail for an execution of this host, the worker that dispatched it for one of
 * another host's (`runDispatched`). Everything between is the same code for both.
 */
export class ExecutionRun implements RetriedRun {
  readonly skill: Skill;
  /** `cancel(id)` of this execution. */
  readonly cancellation = new RunCancellation();
  /** What it runs (read by its sink). */
  readonly request: ExecutionRequest;
  /** Where it records what becomes of it. */
  readonly sink: ExecutionSink;
  /** The throttled store of progress reports (see `DurableExecutions`): state it keeps per run. */
  progressState: unknown;
  readonly options: ExecuteOptions;
  /** `performance.now()` at the start: durations and the overall deadline count from it. */
  readonly startedAt = performance.now();
  readonly timeouts: ExecutionTimeouts;
  readonly shutdown: HostShutdown;
  /** Attempts started so far. */
  attempts = 0;
  private readonly services: ExecutionServices;
  /** When the execution was created (its row's `created_at`), ms since the epoch. */
  readonly createdAt: number;
  /** The caller's input as given (before `before` hooks): what a paused execution runs with again. */
  private readonly callerInput: unknown;
  private ended = false;
  private readonly context: ExecutionState;
  private readonly pass: InterceptorPass;
  /** The record as it is built (read by its sink). */
  readonly record: RecordUnderWay;
  /** Where the input nests too deep to be looked at, if it does: then nothing runs. */
  private readonly overDeepInput: string | undefined;
  /** The input as the audit trail keeps it (through the `audit` hooks). */
  readonly storedInput: unknown;
  /** The `execute_tool` span; undefined when nothing is traced. */
  private readonly span: ExecutionSpan | undefined;

  constructor(services: ExecutionServices, request: ExecutionRequest) {
    const { skill, options } = request;
    this.services = services;
    this.skill = skill;
    this.options = options;
    this.timeouts = services.timeouts;
    this.shutdown = services.shutdown;
    const { resume } = request;
    this.request = request;
    this.sink = request.sink ?? services.sink;
    this.callerInput = request.input;
    this.createdAt = resume?.createdAt ?? Date.now();
    // Time-ordered ids keep inserts at the right edge of the primary-key index: far fewer
    // dirty pages per commit than random v4 ids.
    const id = resume?.id ?? createExecutionId(this.createdAt);
    const parentExecutionId = options.parentExecutionId ?? null;
    const sessionId = resume === undefined ? (options.sessionId ?? null) : resume.sessionId;
    // A granted approval of a resumed run, or of the parent (it covers what the parent calls).
    const granted = resume?.approval ?? request.inheritedApproval ?? null;
    this.context = new ExecutionState({
      port: services.port,
      skill,
      input: request.input,
      executionId: id,
      parentExecutionId,
      apiKeyId: request.caller,
      sessionId,
      depth: request.depth,
      approval: granted?.decision === "approved" ? granted : null,
      progressSink: this,
    });
    // A call without a parent context was not traced (no SDK, or telemetry off): no span to start.
    // A queued run may have kept none and still be traced now, as the root of a trace.
    this.span =
      request.parentContext === undefined && resume === undefined
        ? undefined
        : services.telemetry.start(request.parentContext, {
            skill,
            executionId: id,
            caller: request.caller,
            sessionId,
            parentExecutionId,
            toolCallId: options.toolCallId,
            // A queued run's span covers its wait in the queue; one resumed after approval starts now.
            startTime: resume !== undefined && resume.approval === null ? resume.createdAt : undefined,
          });
    try {
      this.pass = services.interceptors.open(skill, this.context, services.reportFinishFailure, this.span);
      // Checked before audit hooks and the row: both would walk the value recursively.
      this.overDeepInput = findOverDeepPath(request.input, services.maxNestingDepth, "input");
    } catch (error) {
      // A throwing `match` predicate or input getter: the run never starts to end its span.
      this.span?.abandon(error, 0);
      throw error;
    }
    this.storedInput =
      this.overDeepInput === undefined
        ? this.pass.audit("input", request.input)
        : `[not stored: nested deeper than ${services.maxNestingDepth} levels]`;
    this.record = {
      id,
      skillId: skill.id,
      skillName: skill.name,
      skillVersion: skill.version,
      apiKeyId: request.caller,
      sessionId,
      parentExecutionId,
      idempotencyKey: resume === undefined ? (options.idempotencyKey ?? null) : resume.idempotencyKey,
      input: this.overDeepInput === undefined ? request.input : this.storedInput,
      output: null,
      status: "running",
      error: null,
      attempts: resume?.attempts ?? 0,
      duration: null,
      progress: null,
      approval: resume?.approval ?? null,
      traceId: this.span?.traceId ?? null,
      spanId: this.span?.spanId ?? null,
      createdAt: formatTimestamp(this.createdAt),
      finishedAt: null,
    };
  }

  /** The execution's id. */
  get id(): string {
    return this.record.id;
  }

  /** The caller's owner id. */
  get caller(): string {
    return this.record.apiKeyId;
  }

  /** What cancels in place of the caller's signal (see `RetriedRun.signalCancellation`). */
  get signalCancellation(): AttemptCancellation | undefined {
    return this.request.signalCancellation;
  }

  /** The trace context the execution continues (see `ExecutionRequest.parentContext`). */
  get parentContext(): Context | undefined {
    return this.request.parentContext;
  }

  /**
   * Runs every phase; resolves with the final record once its row is committed — or, when the
   * execution stops to wait for approval, with its `awaiting_approval` record once that is.
   */
  async run(): Promise<SkillExecution> {
    const { running } = this.services;
    const { sink } = this;
    // Among the active runs from before its row is committed until the final row is: `wait(id)` and
    // `cancel(id)` find it there without reading the row (a submit answers the id at that
    // commit), and a waiter that comes later reads the committed final row.
    const token = sink.findable ? running.add(this) : -1;
    const { metrics } = this.services.telemetry;
    metrics?.started(this.skill.name);
    const { resume } = this.request;
    if (resume !== undefined && resume.approval === null && metrics !== undefined)
      metrics.dequeued(this.skill.name, Date.now() - resume.createdAt);
    let paused: SkillExecution | undefined;
    let failure: unknown;
    try {
      const rowid = await sink.start(this);
      const outcome =
        this.overDeepInput === undefined
          ? await this.lifecycle()
          : this.tooDeep("INPUT_INVALID", this.overDeepInput);
      this.ended = true;
      sink.settleProgress(this);
      if (outcome.approval !== undefined) paused = this.pause(rowid, outcome.approval);
      else await this.finish(rowid, outcome);
    } catch (error) {
      // Its row could not be written: no outcome ended the span (one that did stays as it ended).
      failure = error;
      this.span?.abandon(error, this.totalAttempts);
      throw error;
    } finally {
      if (token >= 0) running.remove(token);
      const { record } = this;
      // Still `running`: the run failed before it had an outcome.
      const unfinished = record.status === "running";
      metrics?.stopped(
        this.skill.name,
        unfinished ? "error" : record.status,
        unfinished ? codeOf(failure) : record.error?.code,
        paused === undefined ? (record.duration ?? 0) : undefined,
      );
    }
    // Before the record is published: a waiter that submits again at once finds the slot free.
    this.request.onSettled?.();
    return paused ?? this.finished();
  }

  /** Cancels the execution (see `SkillExecutor.cancel`): its attempt fails `CANCELLED` at once. */
  cancel(reason: string): void {
    this.cancellation.cancel(reason);
  }

  /**
   * Takes a handler's progress report: checked, stored as the latest on the record and handed
   * to the durable side. A malformed one is dropped with a warning: reporting never fails a handler.
   */
  progress(report: ProgressReport): void {
    if (this.ended) return;
    const progress = checkedProgress(report);
    if (progress === undefined) {
      this.context.logger.warn("ctx.progress() got a malformed report and dropped it", {
        expected: "{ progress: number, total?: number, message?: string }",
      });
      return;
    }
    this.record.progress = progress;
    this.sink.progress(this, progress);
    const listener = this.options.onProgress;
    if (listener === undefined) return;
    try {
      listener(progress, this.record.id);
    } catch (error) {
      this.context.logger.warn("An onProgress listener threw", { error: String(error) });
    }
  }

  /** The record as it stands (progress included), for events. */
  snapshot(): SkillExecution {
    return { ...this.record } as SkillExecution;
  }

  /** Attempts of this execution made by earlier runs (before a restart or an approval). */
  private get priorAttempts(): number {
    return this.request.resume?.attempts ?? 0;
  }

  /** Attempts of this execution: those of earlier runs (before a restart or an approval) and this one's. */
  private get totalAttempts(): number {
    return this.priorAttempts + this.attempts;
  }

  /** Writes the stop at `awaiting_approval`; the record returned says so, with the approval. */
  private pause(rowid: number, approval: ExecutionApproval): SkillExecution {
    const { record } = this;
    record.status = "awaiting_approval";
    record.approval = approval;
    record.attempts = this.totalAttempts;
    this.span?.end({ status: record.status, error: null, attempts: record.attempts });
    return this.sink.pause(this, {
      rowid,
      approval,
      input: this.callerInput,
      attempts: record.attempts,
      approvalTimeoutMs: this.services.durable.approvalTimeoutMs(this.skill, this.options),
    });
  }

  /** `before`, the attempts and `after` — or `onError` once any of them failed. */
  private async lifecycle(): Promise<Outcome> {
    const { pass, services, skill } = this;
    try {
      let output: unknown;
      const entering = pass.before();
      // No await for synchronous hooks: each await is a turn every execution pays.
      const before = isPromiseLike(entering) ? await entering : entering;
      if (before.shortCircuited) {
        output = before.output;
      } else {
        // Validated after `before` hooks: the schema guards what the handler actually receives,
        // including input that a context-injecting interceptor completed.
        services.validator.validateInput(skill, this.context.input);
        if (skill.approval === "required" && this.context.approval === null) {
          throw new SkillboxError(
            "APPROVAL_REQUIRED",
            `${skill.name}@${skill.version} requires approval before it runs`,
            { data: { requestedBy: "skill" } },
          );
        }
        const ran = await runWithRetries(this);
        this.attempts = ran.attempts;
        if (!ran.succeeded) throw ran.error;
        output = ran.output;
      }
      const checked = this.after(output);
      return isPromiseLike(checked) ? await checked : checked;
    } catch (thrown) {
      const failure = toSkillboxError(thrown, skill);
      // Asking for approval is no failure: no `onError` hook sees it, and nothing is recorded yet.
      if (failure.code === "APPROVAL_REQUIRED" && this.context.depth === 0)
        return this.awaitApproval(failure);
      return await this.onError(failure);
    }
  }

  /** The outcome of an execution that stops to wait for approval. */
  private awaitApproval(request: SkillboxError): Outcome {
    const now = Date.now();
    const timeoutMs = this.services.durable.approvalTimeoutMs(this.skill, this.options);
    const requestedBy = (request.data as { requestedBy?: unknown } | undefined)?.requestedBy;
    return {
      status: "awaiting_approval",
      output: null,
      error: null,
      approval: {
        reason: request.message,
        requestedBy: typeof requestedBy === "string" ? requestedBy : "handler",
        requestedAt: formatTimestamp(now),
        expiresAt: timeoutMs === null ? null : formatTimestamp(now + timeoutMs),
        decision: null,
        decidedBy: null,
        decidedAt: null,
        comment: null,
        inputEdited: false,
      },
    };
  }

  /** `after` hooks and the output checks of a successful run; synchronous unless a hook is not. */
  private after(handlerOutput: unknown): Outcome | Promise<Outcome> {
    // Checked before `after` hooks and the output schema: either may walk the value recursively.
    const overDeepOutput = findOverDeepPath(handlerOutput, this.services.maxNestingDepth, "output");
    // Not an error the hooks may recover from: the value cannot be looked at safely.
    if (overDeepOutput !== undefined) return this.tooDeep("OUTPUT_INVALID", overDeepOutput);
    const leaving = this.pass.after(handlerOutput, this);
    if (isPromiseLike(leaving))
      return Promise.resolve(leaving).then((output) => this.checkOutput(handlerOutput, output));
    return this.checkOutput(handlerOutput, leaving);
  }

  /** The output the `after` hooks left, checked for depth (when they replaced it) and against the schema. */
  private checkOutput(handlerOutput: unknown, output: unknown): Outcome {
    if (output !== handlerOutput) {
      // Walked again only when a hook replaced it: the hot path pays one walk.
      const overDeepOutput = findOverDeepPath(output, this.services.maxNestingDepth, "output");
      if (overDeepOutput !== undefined) return this.tooDeep("OUTPUT_INVALID", overDeepOutput);
    }
    this.services.validator.validateOutput(this.skill, output);
    return { status: "success", output, error: null };
  }

  /** `onError` hooks of the entered layers; the outcome they leave. */
  private async onError(failure: SkillboxError): Promise<Outcome> {
    const recovering = this.pass.onError(failure);
    const recovery = isPromiseLike(recovering) ? await recovering : recovering;
    if (recovery.recovered) return { status: "success", output: recovery.output, error: null };
    const { error } = recovery;
    return {
      status: executionStatusForCode(error.code),
      output: null,
      error: error.data === undefined ? { code: error.code, message: error.message } : error.toJSON(),
    };
  }

  /** One attempt in the skill's runtime (called by `runWithRetries`). */
  invoke(attempt: number, abort: LazyAbortSignal): Promise<unknown> {
    const { services, skill, context } = this;
    const runtime = services.runtimeFor(skill);
    // `ctx.attempt` counts the execution's attempts, those of earlier runs (before a restart, an
    // approval, a lost lease elsewhere) included: what a handler keys its side effects on.
    const number = this.priorAttempts + attempt;
    const request = {
      skill,
      input: context.input,
      context: new ExecutionContext(context, number, abort),
      abort,
      depth: context.depth,
      resolveHandler: () => services.resolveHandler(skill),
    };
    if (this.span === undefined) {
      // `telemetry: false` under a caller's trace: the runtime must not trace either (a worker's
      // dispatch span, relayed spans), so it runs outside any trace.
      if (!this.services.telemetry.enabled) return otelContext.with(ROOT_CONTEXT, () => runtime.run(request));
      return runtime.run(request);
    }
    // The attempt's span is the active one while it runs: spans the runtime and the handler make
    // nest under it, and `ctx.call` and `ctx.traceHeaders()` continue from it.
    return otelContext.with(this.span.startAttempt(number), () => runtime.run(request));
  }

  /** Ends the attempt's span (called by `runWithRetries` once the attempt settled). */
  attemptEnded(error?: unknown): void {
    this.span?.endAttempt(error);
  }

  /** Logs the retry ahead of another attempt (called by `runWithRetries`). */
  onRetry(retry: { attempt: number; delay: number; error: unknown }): void {
    this.span?.startBackoff(retry.delay, retry.error);
    this.context.logger.debug("retrying", {
      skill: `${this.skill.name}@${this.skill.version}`,
      attempt: retry.attempt,
      delay: retry.delay,
      code: (retry.error as SkillboxError).code,
    });
  }

  /** Records the final state through the sink; resolves once it is kept. */
  private finish(rowid: number, outcome: Outcome): Promise<unknown> {
    const { record } = this;
    const finishedAt = Date.now();
    const duration = performance.now() - this.startedAt;
    const storedOutput = outcome.output === null ? null : this.pass.audit("output", outcome.output);
    const attempts = this.totalAttempts;
    record.output = outcome.output ?? null;
    record.status = outcome.status;
    record.error = outcome.error;
    record.attempts = attempts;
    record.duration = duration;
    record.finishedAt = formatTimestamp(finishedAt);
    const { span } = this;
    if (span !== undefined) {
      const { telemetry } = this.services;
      span.end({
        status: outcome.status,
        error: outcome.error,
        attempts,
        arguments: telemetry.recordInputs ? this.storedInput : undefined,
        result: telemetry.recordOutputs && storedOutput !== null ? storedOutput : undefined,
      });
    }
    return this.sink.finish(this, {
      rowid,
      status: outcome.status,
      output: storedOutput ?? null,
      error: outcome.error,
      attempts,
      duration,
      finishedAt,
    });
  }

  /** The committed record, handed to `onFinish` hooks and `finished` listeners, then to the caller. */
  private finished(): SkillExecution {
    const execution = this.record as SkillExecution;
    this.pass.finish(execution);
    this.sink.finished(execution);
    return execution;
  }

  /** The outcome of an input or output nested deeper than `maxNestingDepth`: no hook sees it. */
  private tooDeep(code: "INPUT_INVALID" | "OUTPUT_INVALID", path: string): Outcome {
    const { skill } = this;
    const { maxNestingDepth } = this.services;
    const field = code === "INPUT_INVALID" ? "input" : "output";
    const fix =
      code === "INPUT_INVALID"
        ? "send a flatter value"
        : "return a flatter value (a tree as a list of nodes with parent ids)";
    return {
      status: "error",
      output: null,
      error: {
        code,
        message:
          `${skill.name}@${skill.version}: \`${field}\` nests objects and arrays deeper than ${maxNestingDepth} ` +
          `levels (at ${path}); ${fix}, or raise the host's \`maxNestingDepth\``,
        data: { path, maxDepth: maxNestingDepth },
      },
    };
  }
}

/** A progress report as stored, or undefined when it is malformed. */
function checkedProgress(report: ProgressReport): ExecutionProgress | undefined {
  if (typeof report !== "object" || report === null) return undefined;
  const { progress, total, message } = report;
  if (typeof progress !== "number" || !Number.isFinite(progress)) return undefined;
  if (total !== undefined && (typeof total !== "number" || !Number.isFinite(total))) return undefined;
  if (message !== undefined && typeof message !== "string") return undefined;
  const checked: ExecutionProgress = { progress, at: formatTimestamp(Date.now()) };
  if (total !== undefined) checked.total = total;
  if (message !== undefined)
    checked.message =
      message.length > MAX_PROGRESS_MESSAGE ? `${message.slice(0, MAX_PROGRESS_MESSAGE)}…` : message;
  return checked;
}
