import { randomUUID } from "node:crypto";
import { EventEmitter, setMaxListeners } from "node:events";
import { performance } from "node:perf_hooks";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { Interceptor } from "../interceptors/define-interceptor.js";
import {
  InterceptorChain,
  type InterceptorList,
  InterceptorUnwind,
} from "../interceptors/interceptor-chain.js";
import { isPromiseLike } from "../is-promise-like.js";
import { createConsoleLogger } from "../logger/create-console-logger.js";
import type { SkillRegistry } from "../registry/skill-registry.js";
import { createInlineRuntime } from "../runtime/inline-runtime.js";
import type { SkillRuntime } from "../runtime/skill-runtime.js";
import { createWorkerRuntime, type WorkerRuntimeOptions } from "../runtime/worker-runtime.js";
import type {
  ExecuteOptions,
  ExecutionError,
  ExecutionStatus,
  HostCloseHandler,
  HostLifecycle,
  Skill,
  SkillExecution,
  SkillHandler,
  SkillLogger,
} from "../types.js";
import { createExecutionId } from "./create-execution-id.js";
import { declaredDependency } from "./declared-dependency.js";
import { ExecutionContext, type ExecutionContextHost } from "./execution-context.js";
import { STATUS_BY_CODE, serialize, toSkillboxError } from "./execution-outcome.js";
import { ExecutionState } from "./execution-state.js";
import { type ExecutionFilters, ExecutionStore } from "./execution-store.js";
import type { ExecutionSummary, ExecutionSummaryOptions } from "./execution-summary.js";
import { checkedMilliseconds, ExecutionTimeouts } from "./execution-timeouts.js";
import { DEFAULT_MAX_NESTING_DEPTH, findOverDeepPath } from "./find-over-deep-path.js";
import { HostCloseHandlers } from "./host-close-handlers.js";
import { IdempotencyGate } from "./idempotency-gate.js";
import type { LazyAbortSignal } from "./lazy-abort-signal.js";
import { type LinkedSignal, linkSignals } from "./link-signals.js";
import { resolveSkillForCaller } from "./resolve-skill-for-caller.js";
import { runWithRetries } from "./run-with-retries.js";
import { SchemaValidator } from "./schema-validator.js";
import { type HandlerResolver, SkillHandlers } from "./skill-handlers.js";

export type { HandlerResolver } from "./skill-handlers.js";

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

interface Outcome {
  status: ExecutionStatus;
  output: unknown;
  error: ExecutionError | null;
}

/**
 * Runs skills: resolves `name@range` for the caller, runs interceptors, validates input and
 * output, enforces per-attempt timeouts and an overall deadline, retries with backoff, and
 * records every execution in `skill_executions` — committed before `execute()` resolves.
 */
export class SkillExecutor extends EventEmitter<SkillExecutorEvents> implements ExecutionContextHost {
  readonly registry: SkillRegistry;
  /** The interceptors run around every execution. */
  readonly interceptors = new InterceptorChain();
  private readonly store: ExecutionStore;
  private readonly idempotency: IdempotencyGate;
  private readonly validator = new SchemaValidator();
  private readonly handlers = new SkillHandlers();
  private readonly runtimes = new Map<string, SkillRuntime>();
  private readonly active = new Set<Promise<unknown>>();
  private readonly logger: SkillLogger & { child?(fields: Record<string, unknown>): SkillLogger };
  private readonly timeouts: ExecutionTimeouts;
  private readonly maxCallDepth: number;
  /** Deepest nesting of objects and arrays accepted in an input or output (see `maxNestingDepth` option). */
  readonly maxNestingDepth: number;
  private readonly closeHandlers: HostCloseHandlers;
  /** Aborted when close()'s grace period runs out: cancels every execution still running. */
  private readonly shutdown = new AbortController();
  /** `draining` while close() waits for running executions (nested calls still start), then `closed`. */
  private state: "open" | "draining" | "closed" = "open";
  private closing: Promise<void> | undefined;
  private shutdownGraceMs = 0;
  /** What cancels running attempts at shutdown, and the grace period their message names. */
  private readonly shutdownCancellation = {
    signal: this.shutdown.signal,
    graceMs: () => this.shutdownGraceMs,
  };

  constructor(options: SkillExecutorOptions) {
    super();
    // Every running attempt listens on the shutdown signal: as many listeners as executions.
    setMaxListeners(0, this.shutdown.signal);
    // Checked before anything is opened, so a bad option leaves nothing behind.
    this.timeouts = new ExecutionTimeouts(options);
    this.registry = options.registry;
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
      attemptTimeoutMs: (skill) => this.timeouts.attemptTimeout(skill, {}).milliseconds,
      totalTimeoutMs: this.timeouts.defaultTotalTimeoutMs,
      graceMs: this.store.leaseMs,
    });
    this.maxCallDepth = options.maxCallDepth ?? 16;
    this.maxNestingDepth = options.maxNestingDepth ?? DEFAULT_MAX_NESTING_DEPTH;
    this.closeHandlers = new HostCloseHandlers((error) =>
      this.logger.error("A close handler failed", { error: String(error) }),
    );
    this.registerRuntime(createInlineRuntime());
    this.registerRuntime(createWorkerRuntime({ logger: this.logger, ...options.worker }));
    for (const runtime of options.runtimes ?? []) this.registerRuntime(runtime);
    for (const interceptor of options.interceptors ?? []) this.use(interceptor);
    if (options.recoverInterrupted !== false) this.store.markInterrupted();
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
   * Runs `reference` (`name`, `name@version` or `name@range`) for the caller in `options.apiKeyId`
   * (default `public`). Throws `SKILL_REFERENCE_INVALID`, `SKILL_NOT_FOUND` or `SKILL_DISABLED` when nothing can be resolved;
   * everything after resolution — failures included — is returned as the recorded execution.
   */
  // biome-ignore lint/suspicious/noExplicitAny: `result.output?.field` must work untyped, as in the reference example.
  execute<Output = any>(
    reference: string,
    input: unknown,
    options: ExecuteOptions = {},
  ): Promise<SkillExecution<Output>> {
    return this.begin(reference, input, options, 0) as Promise<SkillExecution<Output>>;
  }

  /** One execution by id. */
  getExecution(id: string): SkillExecution | undefined {
    return this.store.get(id);
  }

  /** Executions, newest first, filtered and paginated. */
  listExecutions(filters: ExecutionFilters = {}): SkillExecution[] {
    return this.store.list(filters);
  }

  /**
   * The page {@link listExecutions} would return, without the bodies: each input and output is a
   * preview cut in SQL (`previewLength` characters, default 1024, with its full size and a
   * `truncated` flag), and the page stops before its JSON would cross `maxBytes` (default 1 MiB).
   * What listings over HTTP and the CLI show; {@link getExecution} has the full record.
   */
  listExecutionSummaries(options: ExecutionFilters & ExecutionSummaryOptions = {}): ExecutionSummary[] {
    return this.store.listSummaries(options);
  }

  /** Number of executions matching the filters (pagination ignored). */
  countExecutions(filters: ExecutionFilters = {}): number {
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

  /** @internal What handlers see as `ctx.hostLifecycle`. */
  get hostLifecycle(): HostLifecycle {
    return this.closeHandlers.lifecycle;
  }

  private async shutDown(graceMs: number | undefined): Promise<void> {
    this.state = "draining";
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
        this.shutdownGraceMs = graceMs;
        this.shutdown.abort();
      }
    }
    await this.drain();
    this.state = "closed";
    await this.closeHandlers.runAll();
    await this.store.close();
    await Promise.allSettled([...this.runtimes.values()].map((runtime) => runtime.close?.()));
  }

  /** Resolves once no execution runs: those started by running ones (ctx.call) join `active` meanwhile. */
  private async drain(): Promise<void> {
    while (this.active.size > 0) await Promise.allSettled([...this.active]);
  }

  /** @internal Creates the logger a handler sees as `ctx.logger`. */
  createLogger(fields: Record<string, unknown>): SkillLogger {
    return this.logger.child?.(fields) ?? this.logger;
  }

  /** @internal Nested execution for `ctx.call`: same owner and session, parent recorded, output returned. */
  async callFrom<Output>(parent: ExecutionContext, reference: string, input: unknown): Promise<Output> {
    const depth = parent.execution.depth + 1;
    if (depth > this.maxCallDepth) {
      throw new SkillboxError(
        "CALL_DEPTH_EXCEEDED",
        `${parent.skill.name} called "${reference}" ${depth} levels deep (limit ${this.maxCallDepth}); check for a call cycle`,
      );
    }
    const execution = await this.begin(
      declaredDependency(this.registry, parent.skill, reference, parent.apiKeyId),
      input,
      {
        apiKeyId: parent.apiKeyId,
        sessionId: parent.sessionId ?? undefined,
        signal: parent.signal,
        parentExecutionId: parent.executionId,
      },
      depth,
    );
    if (execution.status !== "success") {
      const error = execution.error ?? {
        code: "HANDLER_ERROR",
        message: `${reference} ended ${execution.status}`,
      };
      throw new SkillboxError(error.code, error.message, {
        data: { executionId: execution.id, details: error.data },
      });
    }
    return execution.output as Output;
  }

  private begin(
    reference: string,
    input: unknown,
    options: ExecuteOptions,
    depth: number,
  ): Promise<SkillExecution> {
    // While close() drains, running executions may still call nested ones; nothing new starts.
    if (this.state === "closed" || (this.state === "draining" && depth === 0)) {
      return Promise.reject(new SkillboxError("BUSY", "The executor is closed"));
    }
    const caller = options.apiKeyId ?? "public";
    let skill: Skill;
    try {
      skill = resolveSkillForCaller(this.registry, reference, caller);
    } catch (error) {
      return Promise.reject(error);
    }
    let promise: Promise<SkillExecution>;
    let wait: LinkedSignal | undefined;
    if (options.idempotencyKey === undefined) {
      promise = this.run(skill, input, options, caller, depth);
    } else {
      // What ends a wait on another execution: the caller's signals or the host's shutdown.
      wait = linkSignals([options.signal, options.waitSignal, this.shutdown.signal]);
      promise = this.idempotency.run(skill, caller, options.idempotencyKey, input, wait.signal, (inputHash) =>
        this.run(skill, input, options, caller, depth, inputHash),
      );
    }
    this.active.add(promise);
    const forget = () => {
      this.active.delete(promise);
      wait?.unlink();
    };
    promise.then(forget, forget);
    return promise;
  }

  private async run(
    skill: Skill,
    input: unknown,
    options: ExecuteOptions,
    caller: string,
    depth: number,
    inputHash: string | null = null,
  ): Promise<SkillExecution> {
    // Time-ordered ids keep inserts at the right edge of the primary-key index: far fewer
    // dirty pages per commit than random v4 ids.
    const id = createExecutionId();
    const createdAt = Date.now();
    const startedAt = performance.now();
    const parentExecutionId = options.parentExecutionId ?? null;
    const sessionId = options.sessionId ?? null;
    const interceptors = this.interceptors.forSkill(skill);
    const interceptorContext = new ExecutionState(
      this,
      skill,
      input,
      id,
      parentExecutionId,
      caller,
      sessionId,
      depth,
    );
    // Checked before audit hooks and the row: both would walk the value recursively.
    const overDeepPath = findOverDeepPath(input, this.maxNestingDepth, "input");
    const auditedInput =
      overDeepPath === undefined
        ? this.interceptors.applyAudit(interceptors, interceptorContext, "input", input)
        : `[not stored: nested deeper than ${this.maxNestingDepth} levels]`;
    const record: SkillExecution = {
      id,
      skillId: skill.id,
      skillName: skill.name,
      skillVersion: skill.version,
      apiKeyId: caller,
      sessionId,
      parentExecutionId,
      idempotencyKey: options.idempotencyKey ?? null,
      input: overDeepPath === undefined ? input : auditedInput,
      output: null,
      status: "running",
      error: null,
      attempts: 0,
      duration: null,
      createdAt: new Date(createdAt).toISOString(),
      finishedAt: null,
    };
    const rowid = await this.store.start(record, serialize(auditedInput), createdAt, inputHash);
    if (this.listenerCount("started") > 0) this.notify("started", { ...record });
    const attempts = { count: 0 };
    const outcome =
      overDeepPath === undefined
        ? await this.runLifecycle(skill, interceptors, interceptorContext, options, startedAt, attempts)
        : this.tooDeep(skill, "INPUT_INVALID", overDeepPath);
    const finishedAt = Date.now();
    const duration = performance.now() - startedAt;
    const auditedOutput =
      outcome.output === null
        ? null
        : this.interceptors.applyAudit(interceptors, interceptorContext, "output", outcome.output);
    await this.store.finish({
      rowid,
      id,
      status: outcome.status,
      outputJson: serialize(auditedOutput ?? null),
      error: outcome.error,
      attempts: attempts.count,
      duration,
      finishedAt,
    });
    record.output = outcome.output ?? null;
    record.status = outcome.status;
    record.error = outcome.error;
    record.attempts = attempts.count;
    record.duration = duration;
    record.finishedAt = new Date(finishedAt).toISOString();
    if (interceptors.length > 0) {
      this.interceptors.runOnFinish(interceptors, interceptorContext, record, (interceptor, error) =>
        this.logger.error(`Interceptor "${interceptor.name}" failed in onFinish()`, {
          executionId: record.id,
          error: String(error),
        }),
      );
    }
    if (this.listenerCount("finished") > 0) this.notify("finished", record);
    return record;
  }

  /** Emits an execution event; a throwing observer is logged, never allowed to break the execution. */
  private notify(event: keyof SkillExecutorEvents, execution: SkillExecution): void {
    try {
      this.emit(event, execution);
    } catch (error) {
      this.logger.error(`A "${event}" listener threw`, { executionId: execution.id, error: String(error) });
    }
  }

  private async runLifecycle(
    skill: Skill,
    interceptors: InterceptorList,
    context: ExecutionState,
    options: ExecuteOptions,
    startedAt: number,
    attempts: { count: number },
  ): Promise<Outcome> {
    // The way out unwinds only through the layers whose `before` ran (an onion, not a list).
    let entered = interceptors;
    try {
      let output: unknown;
      const running =
        interceptors.length === 0
          ? { entered: 0, shortCircuited: false, output: undefined }
          : this.interceptors.runBefore(interceptors, context);
      // No await for synchronous hooks: each await is a turn every execution pays.
      const before = isPromiseLike(running) ? await running : running;
      entered = before.entered === interceptors.length ? interceptors : interceptors.slice(0, before.entered);
      if (before.shortCircuited) {
        output = before.output;
      } else {
        // Validated after `before` hooks: the schema guards what the handler actually receives,
        // including input that a context-injecting interceptor completed.
        this.validator.validateInput(skill, context.input);
        output = await runWithRetries({
          skill,
          options,
          timeouts: this.timeouts,
          startedAt,
          attempts,
          shutdown: this.shutdownCancellation,
          logger: context.logger,
          invoke: (attempt, abort) => this.invokeRuntime(skill, context, attempt, abort),
        });
      }
      // Checked before `after` hooks and the output schema: either may walk the value recursively.
      let overDeepOutput = findOverDeepPath(output, this.maxNestingDepth, "output");
      if (overDeepOutput === undefined && entered.length > 0) {
        const handlerOutput = output;
        const after = this.interceptors.runAfter(entered, context, {
          output,
          attempts: attempts.count,
          duration: performance.now() - startedAt,
        });
        output = isPromiseLike(after) ? await after : after;
        // Walked again only when a hook replaced it: the hot path pays one walk.
        if (output !== handlerOutput)
          overDeepOutput = findOverDeepPath(output, this.maxNestingDepth, "output");
      }
      if (overDeepOutput !== undefined) return this.tooDeep(skill, "OUTPUT_INVALID", overDeepOutput);
      this.validator.validateOutput(skill, output);
      return { status: "success", output, error: null };
    } catch (thrown) {
      if (thrown instanceof InterceptorUnwind) entered = interceptors.slice(0, thrown.entered);
      let error = toSkillboxError(thrown instanceof InterceptorUnwind ? thrown.error : thrown, skill);
      if (entered.length > 0) {
        const handled = await this.interceptors.runOnError(entered, context, error);
        if (handled.recovered) return { status: "success", output: handled.output, error: null };
        error = handled.error;
      }
      return {
        status: STATUS_BY_CODE[error.code] ?? "error",
        output: null,
        error: error.data === undefined ? { code: error.code, message: error.message } : error.toJSON(),
      };
    }
  }

  /** The outcome of an input or output nested deeper than `maxNestingDepth`. */
  private tooDeep(skill: Skill, code: "INPUT_INVALID" | "OUTPUT_INVALID", path: string): Outcome {
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
          `${skill.name}@${skill.version}: \`${field}\` nests objects and arrays deeper than ${this.maxNestingDepth} ` +
          `levels (at ${path}); ${fix}, or raise the host's \`maxNestingDepth\``,
        data: { path, maxDepth: this.maxNestingDepth },
      },
    };
  }

  private invokeRuntime(
    skill: Skill,
    context: ExecutionState,
    attempt: number,
    abort: LazyAbortSignal,
  ): Promise<unknown> {
    const runtime = this.runtimes.get(skill.runtime);
    if (runtime === undefined) {
      throw new SkillboxError(
        "RUNTIME_NOT_FOUND",
        `${skill.name}@${skill.version} needs the "${skill.runtime}" runtime, which this executor does not have ` +
          `(available: ${[...this.runtimes.keys()].join(", ")}); install the package that provides it`,
      );
    }
    const handlerContext = new ExecutionContext(this, context, attempt, abort);
    return runtime.run({
      skill,
      input: context.input,
      context: handlerContext,
      depth: context.depth,
      resolveHandler: () => this.handlers.resolve(skill),
    });
  }
}
