import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import type { ExecutionBackend } from "../distributed/execution-backend.js";
import { withLocalSkillIds } from "../distributed/local-skill-ids.js";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { Interceptor } from "../interceptors/define-interceptor.js";
import { InterceptorChain } from "../interceptors/interceptor-chain.js";
import { createConsoleLogger } from "../logger/create-console-logger.js";
import type { SkillRegistry } from "../registry/skill-registry.js";
import { createInlineRuntime } from "../runtime/inline-runtime.js";
import type { DescribedRuntime, RuntimeDescription, SkillRuntime } from "../runtime/skill-runtime.js";
import { createWorkerRuntime, type WorkerRuntimeOptions } from "../runtime/worker-runtime.js";
import { ExecutionTelemetry } from "../telemetry/execution-telemetry.js";
import type { TelemetryOptions } from "../telemetry/telemetry-options.js";
import type {
  ExecuteOptions,
  ExecutionApproval,
  HostCloseHandler,
  Skill,
  SkillExecution,
  SkillHandler,
  SkillLogger,
  SubmitOptions,
} from "../types.js";
import { ActiveExecutions } from "./active-executions.js";
import { ActiveRuns } from "./active-runs.js";
import { declaredDependency } from "./declared-dependency.js";
import { type DispatchedRunOutcome, type DispatchedRunRequest, runDispatched } from "./dispatched-run.js";
import { DurableExecutions } from "./durable-executions.js";
import type {
  ApproveOptions,
  CancelOptions,
  EventsOptions,
  RejectOptions,
  WaitOptions,
  WatchFilter,
} from "./durable-options.js";
import type { DurationHistogram, DurationHistogramOptions } from "./duration-histogram-query.js";
import type { ExecutionStreamEvent } from "./execution-event-hub.js";
import { executionFailure } from "./execution-failure.js";
import type { ExecutionPort, NestedCallParent } from "./execution-port.js";
import type { ExecutionQueueOptions } from "./execution-queue.js";
import {
  type ExecutionEvent,
  type ExecutionRequest,
  ExecutionRun,
  type ExecutionServices,
} from "./execution-run.js";
import type { SkillStatsOptions, SkillStatsResult } from "./execution-stats.js";
import { type ExecutionFilters, ExecutionStore } from "./execution-store.js";
import type { ExecutionSummary, ExecutionSummaryOptions } from "./execution-summary.js";
import type { ExecutionTimeline, ExecutionTimelineOptions } from "./execution-timeline-query.js";
import { checkedMilliseconds, ExecutionTimeouts } from "./execution-timeouts.js";
import { DEFAULT_MAX_NESTING_DEPTH } from "./find-over-deep-path.js";
import { HostCloseHandlers } from "./host-close-handlers.js";
import { HostShutdown } from "./host-shutdown.js";
import { IdempotencyGate } from "./idempotency-gate.js";
import { linkSignals } from "./link-signals.js";
import { LocalAuditSink } from "./local-audit-sink.js";
import { handOverNestedRecord } from "./nested-record-handover.js";
import { checkSkillForCaller, resolveSkillForCaller } from "./resolve-skill-for-caller.js";
import { SchemaValidator } from "./schema-validator.js";
import { type HandlerResolver, SkillHandlers } from "./skill-handlers.js";

export type { HandlerResolver } from "./skill-handlers.js";

const TOP_LEVEL = Object.freeze({ depth: 0, approval: null });

/** Options of {@link SkillExecutor}. */
export interface SkillExecutorOptions {
  registry: SkillRegistry;
  /** Per-attempt timeout when the skill sets none (default 30 000 ms). A call's `timeoutMs` can only lower it. */
  defaultTimeoutMs?: number;
  /**
   * Overall deadline across retries (default: none beyond the attempts). A call's `totalTimeoutMs`
   * can only lower it; without it, a call may set one.
   */
  defaultTotalTimeoutMs?: number;
  /**
   * The operator's ceiling on every attempt's timeout, a skill's own `timeoutMs` and
   * `defaultTimeoutMs` included (default: none). Bounds how long one execution can pin the host.
   */
  maxAttemptTimeoutMs?: number;
  /** Deepest chain of nested `ctx.call` (default 16). */
  maxCallDepth?: number;
  /**
   * Deepest nesting of objects and arrays in an input or an output (default 100). Deeper input is
   * refused with `INPUT_INVALID` before any interceptor or handler sees it (the row records the
   * refusal, not the value); deeper output fails with `OUTPUT_INVALID` before `after` hooks and the
   * output schema see it. Recursive code —
   * `JSON.stringify`, validators, audit hooks — overflows the stack on values thousands deep.
   */
  maxNestingDepth?: number;
  logger?: SkillLogger & { child?(fields: Record<string, unknown>): SkillLogger };
  /** Extra runtimes besides `inline` and `worker` (a runtime with either name replaces it). */
  runtimes?: SkillRuntime[];
  /** Pool settings of the built-in `worker` runtime (threads start on first use). */
  worker?: WorkerRuntimeOptions;
  interceptors?: Interceptor[];
  /**
   * Mark rows orphaned by dead runners `interrupted`: on start and on every lease renewal, rows of
   * runners whose lease expired (any host) or whose process is gone (this host) (default true).
   */
  recoverInterrupted?: boolean;
  /**
   * How long this executor's runner lease lasts, in ms (default 30 000, renewed every third of
   * it). Once a dead host's lease lapses, any live host marks its running rows `interrupted`.
   */
  runnerLeaseMs?: number;
  /**
   * The background queue of submitted (and approved) executions: total and per-skill limits and
   * how often other processes' work is looked for (see `ExecutionQueueOptions`). `false`: this
   * executor never runs queued work — for one-shot processes that only submit, read or decide.
   * Default: on, 16 at once.
   */
  queue?: ExecutionQueueOptions | false;
  /**
   * How long an execution may wait for approval when neither the call nor the skill says, in ms
   * (default 24 h); `null`: for ever. A lapsed one ends `rejected` with `APPROVAL_EXPIRED`.
   */
  approvalTimeoutMs?: number | null;
  /**
   * What the executor reports to OpenTelemetry (spans and metrics, through `@opentelemetry/api`
   * to whatever SDK the application installed): whether the `execute_tool` spans carry inputs and
   * outputs (default: neither). `false`: no spans and no metrics at all.
   */
  telemetry?: TelemetryOptions | false;
  /**
   * Where executions go instead of this executor's own queue and database: a shared record and a
   * queue that workers on other hosts take from (`createDistributedHost` of `@skillbox/distributed`
   * builds one). References still resolve against this executor's registry and the interceptors'
   * `audit` hooks still run here; `execute()`, `submit()`, `wait()`, decisions, events and the
   * audit-trail reads go to the backend. Nested `ctx.call` executions run where their parent
   * runs; each one that ends is handed over to the backend (`recordNested`) and leaves this
   * executor's store.
   * The background queue is off (`queue` is ignored).
   */
  backend?: ExecutionBackend;
}

/** Events of {@link SkillExecutor}. */
export interface SkillExecutorEvents {
  started: [SkillExecution];
  finished: [SkillExecution];
}

/** Options of {@link SkillExecutor.close}. */
export interface SkillExecutorCloseOptions {
  /**
   * Milliseconds running executions get to finish; those still running then are cancelled and
   * recorded `cancelled` (a shutdown) before `close()` resolves. Default: wait for them all.
   */
  graceMs?: number;
}

/**
 * Runs skills: resolves `name@range` for the caller, runs interceptors, validates input and
 * output, enforces per-attempt timeouts and an overall deadline, retries with backoff, and
 * records every execution in `skill_executions` — committed before `execute()` resolves.
 *
 * The executor holds what executions share (the registry, the handlers, the runtimes, the
 * store) and its own lifecycle (close, drain, shutdown); each execution is an `ExecutionRun`.
 */
export class SkillExecutor extends EventEmitter<SkillExecutorEvents> {
  readonly registry: SkillRegistry;
  /** The interceptors run around every execution. */
  readonly interceptors = new InterceptorChain();
  private readonly store: ExecutionStore;
  private readonly handlers = new SkillHandlers();
  private readonly runtimes = new Map<string, SkillRuntime>();
  private readonly idempotency: IdempotencyGate;
  /** What every execution shares; see `ExecutionServices`. */
  private readonly services: ExecutionServices;
  private readonly logger: SkillLogger & { child?(fields: Record<string, unknown>): SkillLogger };
  private readonly maxCallDepth: number;
  /** Deepest nesting of objects and arrays accepted in an input or output (see `maxNestingDepth` option). */
  readonly maxNestingDepth: number;
  private readonly closeHandlers: HostCloseHandlers;
  /** Triggered when close()'s grace period runs out: cancels every execution still running. */
  private readonly shutdown = new HostShutdown();
  private readonly active = new ActiveExecutions();
  private readonly telemetry: ExecutionTelemetry;
  /** Submitted executions, the queue, approvals and events. */
  private readonly durable: DurableExecutions;
  /** Where executions go instead, on a distributed host (see the `backend` option). */
  private readonly backend: ExecutionBackend | undefined;
  /** `draining` while close() waits for running executions (nested calls still start), then `closed`. */
  private state: "open" | "draining" | "closed" = "open";
  private closing: Promise<void> | undefined;

  constructor(options: SkillExecutorOptions) {
    super();
    // Checked before anything is opened, so a bad option leaves nothing behind.
    const timeouts = new ExecutionTimeouts(options);
    this.registry = options.registry;
    this.backend = options.backend;
    this.logger = options.logger ?? createConsoleLogger();
    this.store = new ExecutionStore(options.registry.database, randomUUID(), {
      leaseMs: options.runnerLeaseMs,
      recover: options.recoverInterrupted !== false,
      onLeaseLost: () =>
        this.logger.warn(
          "Another host took this executor for dead (its runner lease lapsed) and interrupted its running executions",
        ),
    });
    this.idempotency = new IdempotencyGate(this.store, {
      attemptTimeoutMs: (skill) => timeouts.attemptTimeout(skill, {}).milliseconds,
      totalTimeoutMs: timeouts.defaultTotalTimeoutMs,
      graceMs: this.store.leaseMs,
    });
    this.maxCallDepth = options.maxCallDepth ?? 16;
    this.maxNestingDepth = options.maxNestingDepth ?? DEFAULT_MAX_NESTING_DEPTH;
    this.closeHandlers = new HostCloseHandlers((error) =>
      this.logger.error("A close handler failed", { error: String(error) }),
    );
    const port: ExecutionPort = {
      call: (parent, reference, input) => this.callNested(parent, reference, input),
      logger: (fields) => this.logger.child?.(fields) ?? this.logger,
      hostLifecycle: this.closeHandlers.lifecycle,
    };
    const running = new ActiveRuns<ExecutionRun>();
    const validator = new SchemaValidator();
    this.telemetry = new ExecutionTelemetry(options.telemetry);
    this.durable = new DurableExecutions({
      store: this.store,
      registry: this.registry,
      validator,
      interceptors: this.interceptors,
      port,
      reportFinishFailure: (interceptor, error, execution) =>
        this.logger.error(`Interceptor "${interceptor.name}" failed in onFinish()`, {
          executionId: execution.id,
          error: String(error),
        }),
      logger: this.logger,
      maxNestingDepth: this.maxNestingDepth,
      queue: options.backend === undefined ? options.queue : false,
      approvalTimeoutMs: options.approvalTimeoutMs,
      running,
      telemetry: this.telemetry,
      runExecution: (request) => {
        const promise = this.run(request);
        this.active.track(promise);
        return promise;
      },
    });
    this.services = {
      store: this.store,
      validator,
      timeouts,
      interceptors: this.interceptors,
      shutdown: this.shutdown,
      port,
      maxNestingDepth: this.maxNestingDepth,
      runtimeFor: (skill) => this.runtimeFor(skill),
      resolveHandler: (skill) => this.handlers.resolve(skill),
      listening: (event) => this.listenerCount(event) > 0,
      notify: (event, execution) => this.notify(event, execution),
      reportFinishFailure: (interceptor, error, execution) =>
        this.logger.error(`Interceptor "${interceptor.name}" failed in onFinish()`, {
          executionId: execution.id,
          error: String(error),
        }),
      running,
      durable: this.durable,
      sink: new LocalAuditSink({
        store: this.store,
        durable: this.durable,
        listening: (event) => this.listenerCount(event) > 0,
        notify: (event, execution) => this.notify(event, execution),
      }),
      telemetry: this.telemetry,
    };
    this.registerRuntime(createInlineRuntime());
    this.registerRuntime(createWorkerRuntime({ logger: this.logger, ...options.worker }));
    for (const runtime of options.runtimes ?? []) this.registerRuntime(runtime);
    for (const interceptor of options.interceptors ?? []) this.use(interceptor);
    if (options.recoverInterrupted !== false) this.store.markInterrupted();
    // After recovery: what it put back in the queue runs too.
    this.durable.start();
  }

  /** Binds a handler function to the name skills use in their `handler` field. */
  registerHandler(name: string, handler: SkillHandler): void {
    this.handlers.register(name, handler);
  }

  /** Removes a handler registered with {@link registerHandler}. */
  unregisterHandler(name: string): boolean {
    return this.handlers.unregister(name);
  }

  /** Adds a resolver consulted (in order) for handler references that are not registered names. Returns a remover. */
  addHandlerResolver(resolver: HandlerResolver): () => void {
    return this.handlers.addResolver(resolver);
  }

  /** Adds or replaces the runtime used for skills whose `runtime` equals `runtime.name`. */
  registerRuntime(runtime: SkillRuntime): void {
    this.runtimes.set(runtime.name, runtime);
  }

  /** Adds an interceptor (replacing one with the same name). */
  use(interceptor: Interceptor): void {
    this.interceptors.use(interceptor);
  }

  /** Removes an interceptor by name. */
  removeInterceptor(name: string): boolean {
    return this.interceptors.remove(name);
  }

  /**
   * Runs `target` for the caller in `options.apiKeyId` (default `public`): a reference (`name`,
   * `name@version` or `name@range`), or a `Skill` an adapter already resolved — then it is not
   * resolved again, only checked to be visible to the caller and enabled. Throws
   * `SKILL_REFERENCE_INVALID`, `SKILL_NOT_FOUND` or `SKILL_DISABLED` when nothing can be run;
   * everything after resolution — failures included — is returned as the recorded execution.
   */
  // biome-ignore lint/suspicious/noExplicitAny: `result.output?.field` must work untyped, as in the reference example.
  execute<Output = any>(
    target: string | Skill,
    input: unknown,
    options: ExecuteOptions = {},
  ): Promise<SkillExecution<Output>> {
    return this.begin(target, input, options) as Promise<SkillExecution<Output>>;
  }

  /**
   * Runs one execution that another host recorded and this process claimed from the shared
   * record (a `skillbox worker` of `@skillbox/distributed`), through the same pipeline as any
   * execution here: `before` hooks, the input schema, the runtime (inline, worker threads,
   * containers), per-attempt and total timeouts, retries with backoff, `after` / `onError` /
   * `onFinish` hooks, the output schema, spans and metrics (the queue wait included),
   * `ctx.progress` and `ctx.call`. It resolves with the outcome instead of recording it: the
   * caller commits it under its claim. Nothing of it stays here — no row in this executor's audit
   * trail, no event to its listeners, no entry in its active runs — though `close()` waits for it
   * (and cancels it once the grace period ends).
   *
   * - `ctx.executionId` is `request.executionId`; `ctx.attempt` continues from `attemptsSoFar + 1`.
   * - An approval asked for (by the skill, an interceptor or the handler) ends it `paused`: the
   *   caller stores the request; once approved, it runs again with `approval` set and is not asked again.
   * - `request.signal` stops it at once (a worker thread terminated, a container killed): a
   *   `SkillboxError` reason with code `TIMEOUT` or `DEADLINE_EXCEEDED` ends it `timeout`, any
   *   other reason `cancelled`.
   * - Nested `ctx.call` executions run here, as nested calls of a local execution do, with the
   *   dispatched one as their parent: each is recorded in this executor's own audit trail, and
   *   once it ended handed over to the backend's shared record (its local row then deleted; kept
   *   when the handover fails).
   * - A skill disabled here ends it `error` (`SKILL_DISABLED`) without running.
   *
   * Rejects with `BUSY` once the executor closes, and when the run cannot start at all (a
   * throwing interceptor `match` predicate or input getter).
   */
  runDispatched(request: DispatchedRunRequest): Promise<DispatchedRunOutcome> {
    if (this.state !== "open") return Promise.reject(new SkillboxError("BUSY", "The executor is closed"));
    const promise = runDispatched(request, (execution) => this.run(execution));
    this.active.track(promise);
    return promise;
  }

  /**
   * Records an execution of `target` as `queued` and resolves with its id once the row is
   * committed; the background queue (of this host or another on the same database) runs it. Its
   * raw input waits in the database (not in the audit columns, which `audit` hooks redact)
   * until it ends. Resolution errors (`SKILL_NOT_FOUND`, …) and an input nested too deep or not
   * JSON (`INPUT_INVALID`) reject at once; everything later is in the record. With an
   * `idempotencyKey`, a repeat resolves with the first execution's id.
   */
  submit(target: string | Skill, input: unknown, options: SubmitOptions = {}): Promise<string> {
    if (this.state !== "open") return Promise.reject(new SkillboxError("BUSY", "The executor is closed"));
    try {
      const caller = options.apiKeyId ?? "public";
      const skill = this.resolveForCaller(target, caller);
      if (this.backend !== undefined) {
        return this.backend.submit(this.durable.prepareSubmit(skill, input, options, caller));
      }
      return this.durable.submit(skill, input, options, caller);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Resolves with the final record of execution `id` (at once when it has ended), or — with
   * `returnOnApproval` — when it stops at `awaiting_approval`. Works for executions of any
   * process on the database. `EXECUTION_NOT_FOUND` for an id the caller (`apiKeyId`) cannot see;
   * `WAIT_TIMEOUT` after `timeoutMs`, `WAIT_ABORTED` on `signal` (the execution goes on).
   */
  wait(id: string, options: WaitOptions = {}): Promise<SkillExecution> {
    if (this.backend !== undefined) return this.backend.wait(id, options);
    return this.durable.wait(id, options);
  }

  /**
   * Cancels execution `id`: a queued or waiting one ends `cancelled` at once; a running one in
   * this process fails `CANCELLED` at once (resolves with its final record); one running in
   * another process is asked to stop (resolves with its record as it stands). `EXECUTION_FINISHED`
   * when it has ended; `EXECUTION_NOT_FOUND` for an id the caller cannot see.
   */
  cancel(id: string, options: CancelOptions = {}): Promise<SkillExecution> {
    if (this.backend !== undefined) return this.backend.cancel(id, options);
    return this.durable.cancel(id, options);
  }

  /**
   * Approves execution `id`, which waits at `awaiting_approval`: the decision (who, when, an
   * optional comment) is recorded and it goes back to the queue, with `input` instead of its
   * own when given (validated against the skill's schema first: `INPUT_INVALID`, nothing
   * changed). `APPROVAL_NOT_PENDING` when it does not wait (decided already, ended),
   * `APPROVAL_EXPIRED` when its deadline passed. Resolves with the record, now `queued`.
   */
  approve(id: string, options: ApproveOptions): Promise<SkillExecution> {
    if (this.backend !== undefined) return this.approveThroughBackend(this.backend, id, options);
    return this.durable.approve(id, options);
  }

  /**
   * Rejects execution `id`, which waits at `awaiting_approval`: it ends `rejected`
   * (`APPROVAL_REJECTED`), with who and why recorded. Errors as {@link approve}.
   */
  reject(id: string, options: RejectOptions): Promise<SkillExecution> {
    if (this.backend !== undefined) return this.backend.reject(id, options);
    return this.durable.reject(id, options);
  }

  /**
   * The events of execution `id` from the moment of subscription (the first `next()`): its
   * status as it stands, then status changes and progress reports in order, ending with a
   * `finished` event carrying the final record (just that one when it has ended already).
   */
  events(id: string, options: EventsOptions = {}): AsyncGenerator<ExecutionStreamEvent, void, undefined> {
    if (this.backend !== undefined) return this.backend.events(id, options);
    return this.durable.events(id, options);
  }

  /**
   * The events of every execution matching `filter` (an owner, a skill, some ids) from now on,
   * until `signal` aborts or the consumer stops. A consumer that falls far behind loses
   * intermediate progress reports first; status changes are never dropped silently.
   */
  watchExecutions(filter: WatchFilter = {}): AsyncGenerator<ExecutionStreamEvent, void, undefined> {
    if (this.backend !== undefined) return this.backend.watch(filter);
    return this.durable.watch(filter);
  }

  /**
   * One execution by id, or `undefined` when there is none. Resolves asynchronously (like every
   * audit-trail read) so the same API can sit over a store that answers over the network, such as
   * PostgreSQL; the SQLite store answers at once.
   */
  async getExecution(id: string): Promise<SkillExecution | undefined> {
    if (this.backend !== undefined) return this.backend.get(id);
    return this.store.get(id);
  }

  /** Executions, newest first, filtered and paginated. Resolves asynchronously, as {@link getExecution}. */
  async listExecutions(filters: ExecutionFilters = {}): Promise<SkillExecution[]> {
    if (this.backend !== undefined) return this.backend.list(filters);
    return this.store.list(filters);
  }

  /**
   * The page {@link listExecutions} would return, without the bodies: each input and output is a
   * preview cut in SQL (`previewLength` characters, default 1024, with its full size and a
   * `truncated` flag), and the page stops before its JSON would cross `maxBytes` (default 1 MiB).
   * What listings over HTTP and the CLI show; {@link getExecution} has the full record. Resolves
   * asynchronously, as {@link getExecution}.
   */
  async listExecutionSummaries(
    options: ExecutionFilters & ExecutionSummaryOptions = {},
  ): Promise<ExecutionSummary[]> {
    if (this.backend !== undefined) return this.backend.listSummaries(options);
    return this.store.listSummaries(options);
  }

  /**
   * Recent statistics per skill version for one caller (`owner`, default `public`): over its
   * most recent `window` executions (default 1000) of each skill name — every name it can see
   * unless `skills` lists some — optionally only those since `since`, the executions by status,
   * the success rate among finished ones, and p50/p95 durations. Another owner's executions
   * never count. One bounded SQL query (with a `backend`, over the shared record). Resolves
   * asynchronously, as {@link getExecution}.
   */
  async skillStats(options: SkillStatsOptions = {}): Promise<SkillStatsResult> {
    const owner = options.owner ?? "public";
    const names = options.skills ?? [...new Set(this.registry.list(owner).map((skill) => skill.name))];
    if (this.backend !== undefined) {
      // The shared record tells versions apart by name and version: named here by this registry's ids.
      return withLocalSkillIds(
        await this.backend.skillStats(owner, names, options),
        this.registry.list(owner),
      );
    }
    return this.store.stats(owner, names, options);
  }

  /**
   * One caller's executions (`owner`, default `public`) counted per bucket of creation time and
   * by status: `[since, until)` (default the last hour) cut into `bucketSeconds` buckets (default
   * 60, at most 1440 buckets), every bucket present oldest first, only `skill`'s when given.
   * Another owner's executions never count; at most the newest 200 000 in the range do. One
   * GROUP BY query (with a `backend`, over the shared record, by its clock). Resolves
   * asynchronously, as {@link getExecution}.
   */
  async executionTimeline(options: ExecutionTimelineOptions = {}): Promise<ExecutionTimeline> {
    const owner = options.owner ?? "public";
    if (this.backend !== undefined) return this.backend.executionTimeline(owner, options);
    return this.store.timeline(owner, options);
  }

  /**
   * Duration histograms per skill name for one caller (`owner`, default `public`): over the same
   * window as {@link skillStats} (its most recent `window` executions of each name, default 1000,
   * since `since` when given), the finished ones with a duration, counted in the fixed buckets of
   * `DURATION_HISTOGRAM_BOUNDS_MS`, with nearest-rank p50/p95. Every name it can see unless
   * `skills` lists some; names with no such execution are left out. One bounded SQL query (with
   * a `backend`, over the shared record).
   * Resolves asynchronously, as {@link getExecution}.
   */
  async durationHistogram(options: DurationHistogramOptions = {}): Promise<DurationHistogram> {
    const owner = options.owner ?? "public";
    const names = options.skills ?? [...new Set(this.registry.list(owner).map((skill) => skill.name))];
    if (this.backend !== undefined) return this.backend.durationHistogram(owner, names, options);
    return this.store.durations(owner, names, options);
  }

  /**
   * Every runtime this executor has, by name, with what its `describe()` tells (settings, pool
   * state; `{ details: {}, pools: [] }` for one without it). Pools serving a skill version are
   * listed only when `owner` (default: any) can see that skill in the registry. Cheap: nothing
   * is spawned or awaited.
   */
  describeRuntimes(options: { owner?: string } = {}): DescribedRuntime[] {
    const described: DescribedRuntime[] = [];
    for (const runtime of this.runtimes.values()) {
      let description: RuntimeDescription = { details: {}, pools: [] };
      try {
        description = runtime.describe?.() ?? description;
      } catch (error) {
        // One runtime's faulty describe() must not hide the others.
        this.logger.warn("a runtime failed to describe itself", {
          runtime: runtime.name,
          error: String(error),
        });
      }
      const pools = description.pools.filter(
        (pool) =>
          pool.skillId === undefined || this.registry.getSkill(pool.skillId, options.owner) !== undefined,
      );
      described.push({ name: runtime.name, details: { ...description.details }, pools });
    }
    return described;
  }

  /**
   * Number of executions matching the filters (pagination ignored). Resolves asynchronously, as
   * {@link getExecution}.
   */
  async countExecutions(filters: ExecutionFilters = {}): Promise<number> {
    if (this.backend !== undefined) return this.backend.count(filters);
    return this.store.count(filters);
  }

  /**
   * Stops taking executions, waits for the running ones (up to `graceMs`, then cancels the rest,
   * recorded `cancelled`), runs the close handlers, commits the audit trail and closes runtimes.
   * Calling it again returns the same promise.
   */
  close(options: SkillExecutorCloseOptions = {}): Promise<void> {
    if (this.closing === undefined) {
      let graceMs: number | undefined;
      try {
        graceMs = checkedMilliseconds("graceMs", options.graceMs, true);
      } catch (error) {
        // A malformed option leaves the executor open, so a corrected call can still close it.
        return Promise.reject(error);
      }
      this.closing = this.shutDown(graceMs);
    }
    return this.closing;
  }

  /**
   * Registers cleanup to run when the executor closes, after its last execution ended (the same
   * as `ctx.hostLifecycle.onClose` in a handler). Returns an unregister function.
   */
  onClose(handler: HostCloseHandler): () => void {
    return this.closeHandlers.add(handler);
  }

  private async shutDown(graceMs: number | undefined): Promise<void> {
    this.state = "draining";
    this.durable.close();
    if (graceMs !== undefined && this.active.size > 0) {
      // The whole drain races the grace period, nested calls started meanwhile included: a
      // parent that did not wait for its child must not let the child outlive the grace.
      const drained = this.drain().then(() => true);
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), graceMs);
      });
      const finished = await Promise.race([drained, graceOver]);
      clearTimeout(timer);
      if (!finished) {
        this.logger.warn(
          `Shutting down: cancelling ${this.active.size} execution(s) still running after ${graceMs} ms`,
        );
        this.shutdown.trigger(graceMs);
      }
    }
    await this.drain();
    this.state = "closed";
    await this.closeHandlers.runAll();
    await this.store.close();
    await Promise.allSettled([...this.runtimes.values()].map((runtime) => runtime.close?.()));
  }

  /** Resolves once no execution runs: those started by running ones (ctx.call) join `active` meanwhile. */
  private drain(): Promise<void> {
    return this.active.drained();
  }

  /** Nested execution for `ctx.call`: same owner and session, parent recorded, output returned. */
  private async callNested<Output>(
    parent: NestedCallParent,
    reference: string,
    input: unknown,
  ): Promise<Output> {
    const depth = parent.depth + 1;
    if (depth > this.maxCallDepth) {
      throw new SkillboxError(
        "CALL_DEPTH_EXCEEDED",
        `${parent.skill.name} called "${reference}" ${depth} levels deep (limit ${this.maxCallDepth}); check for a call cycle`,
      );
    }
    const skill = declaredDependency(this.registry, parent.skill, reference, parent.apiKeyId);
    const execution = await this.begin(
      skill,
      input,
      {
        apiKeyId: parent.apiKeyId,
        sessionId: parent.sessionId ?? undefined,
        signal: parent.signal,
        parentExecutionId: parent.executionId,
      },
      { depth, approval: parent.approval },
    );
    if (this.backend !== undefined) {
      // Its final row is committed here; the shared record is where every host reads it. Tracked,
      // so close() waits for it even when the parent did not wait for its call.
      const handover = handOverNestedRecord(
        { store: this.store, backend: this.backend, logger: this.logger },
        execution.id,
        skill,
      );
      this.active.track(handover);
      await handover;
    }
    const failure = executionFailure(execution);
    if (failure !== undefined) {
      // The parent sees the child's code and message, and which execution to look up.
      throw new SkillboxError(failure.code, failure.message, {
        data: { executionId: execution.id, details: failure.data },
      });
    }
    return execution.output as Output;
  }

  /** `nested`: the depth of a `ctx.call` and the parent's granted approval (absent at the top). */
  private begin(
    target: string | Skill,
    input: unknown,
    options: ExecuteOptions,
    nested: { depth: number; approval: ExecutionApproval | null } = TOP_LEVEL,
  ): Promise<SkillExecution> {
    const { depth, approval: inheritedApproval } = nested;
    // While close() drains, running executions may still call nested ones; nothing new starts.
    if (this.state === "closed" || (this.state === "draining" && depth === 0)) {
      return Promise.reject(new SkillboxError("BUSY", "The executor is closed"));
    }
    const caller = options.apiKeyId ?? "public";
    let skill: Skill;
    try {
      skill = this.resolveForCaller(target, caller);
    } catch (error) {
      return Promise.reject(error);
    }
    // A nested call runs where its parent runs (a worker): only callers' executions are dispatched.
    if (this.backend !== undefined && depth === 0)
      return this.executeThroughBackend(this.backend, { skill, input, options, caller });
    // The caller's trace (for `ctx.call`, the parent's attempt or a span its handler made).
    const parentContext = this.telemetry.parentContext();
    let promise: Promise<SkillExecution>;
    if (options.idempotencyKey === undefined) {
      promise = this.run({
        skill,
        input,
        options,
        caller,
        depth,
        inputHash: null,
        inheritedApproval,
        parentContext,
      });
    } else {
      let ran = false;
      // What ends a wait on another execution: the caller's signals or the host's shutdown.
      const wait = linkSignals([options.signal, options.waitSignal, this.shutdown.signal]);
      promise = this.idempotency.run({
        skill,
        owner: caller,
        key: options.idempotencyKey,
        input,
        signal: wait.signal,
        execute: (inputHash) => {
          ran = true;
          return this.run({
            skill,
            input,
            options,
            caller,
            depth,
            inputHash,
            inheritedApproval,
            parentContext,
          });
        },
      });
      promise.then(wait.unlink, wait.unlink);
      // Answered with a stored execution: nothing ran, and the replay still gets a span.
      if (parentContext !== undefined) {
        promise.then((execution) => {
          if (!ran) this.telemetry.replayed(parentContext, execution, skill, options.toolCallId);
        }, noop);
      }
    }
    this.active.track(promise);
    return promise;
  }

  /**
   * `execute()` on a distributed host: submitted to the backend, then waited for until its final
   * record — or, as locally, until it stops at `awaiting_approval`. The caller's `signal` cancels
   * the execution wherever it runs; `waitSignal` only stops waiting.
   */
  private async executeThroughBackend(
    backend: ExecutionBackend,
    {
      skill,
      input,
      options,
      caller,
    }: { skill: Skill; input: unknown; options: ExecuteOptions; caller: string },
  ): Promise<SkillExecution> {
    const prepared = this.durable.prepareSubmit(skill, input, options, caller);
    const id = await backend.submit(prepared);
    const signal = options.signal;
    const onAbort = () => {
      backend.cancel(id, { apiKeyId: caller, reason: "the caller's signal was aborted" }).catch(() => {
        // Ended meanwhile: the wait below reads its final record.
      });
    };
    if (signal?.aborted === true) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    try {
      return await backend.wait(id, {
        apiKeyId: caller,
        returnOnApproval: true,
        ...(options.waitSignal === undefined ? {} : { signal: options.waitSignal }),
      });
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** `approve()` on a distributed host: the decision and an edited input are prepared here, recorded there. */
  private async approveThroughBackend(
    backend: ExecutionBackend,
    id: string,
    options: ApproveOptions,
  ): Promise<SkillExecution> {
    const current = await backend.get(id);
    if (current === undefined || (options.apiKeyId !== undefined && current.apiKeyId !== options.apiKeyId)) {
      throw new SkillboxError(
        "EXECUTION_NOT_FOUND",
        `No execution ${JSON.stringify(id)} is visible to this caller`,
        {
          data: { id },
        },
      );
    }
    const skill =
      this.registry.resolveVersion(current.skillName, current.skillVersion, current.apiKeyId) ?? undefined;
    return backend.approve(this.durable.prepareApproval(current, skill, options));
  }

  private run(request: ExecutionRequest): Promise<SkillExecution> {
    try {
      return new ExecutionRun(this.services, request).run();
    } catch (error) {
      // A throwing `match` predicate or input getter: a rejection, as from anything after resolution.
      return Promise.reject(error);
    }
  }

  /**
   * The skill `target` names for `caller` — a reference resolved in the registry, or a `Skill`
   * an adapter resolved, checked to be visible and enabled — else the resolution's error.
   */
  private resolveForCaller(target: string | Skill, caller: string): Skill {
    return typeof target === "string"
      ? resolveSkillForCaller(this.registry, target, caller)
      : checkSkillForCaller(target, caller);
  }

  /** The runtime `skill.runtime` names, or `RUNTIME_NOT_FOUND` saying which exist. */
  private runtimeFor(skill: Skill): SkillRuntime {
    const runtime = this.runtimes.get(skill.runtime);
    if (runtime !== undefined) return runtime;
    throw new SkillboxError(
      "RUNTIME_NOT_FOUND",
      `${skill.name}@${skill.version} needs the "${skill.runtime}" runtime, which this executor does not have ` +
        `(available: ${[...this.runtimes.keys()].join(", ")}); install the package that provides it`,
    );
  }

  /** Emits an execution event; a throwing observer is logged, never allowed to break the execution. */
  private notify(event: ExecutionEvent, execution: SkillExecution): void {
    try {
      this.emit(event, execution);
    } catch (error) {
      this.logger.error(`A "${event}" listener threw`, { executionId: execution.id, error: String(error) });
    }
  }
}

function noop(): void {}
