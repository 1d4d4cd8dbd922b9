import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
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
import { IdempotencyGate } from "./idempotency-gate.js";
import type { LazyAbortSignal } from "./lazy-abort-signal.js";
import { resolveSkillForCaller } from "./resolve-skill-for-caller.js";
import { isRetryable, resolveRetryPolicy, retryDelay } from "./retry-policy.js";
import { runAttempt } from "./run-attempt.js";
import { SchemaValidator } from "./schema-validator.js";

/** Finds the handler of a skill whose `handler` reference is not a registered name (used by loaders). */
export type HandlerResolver = (skill: Skill) => SkillHandler | undefined | Promise<SkillHandler | undefined>;

/** Options of {@link SkillExecutor}. */
export interface SkillExecutorOptions {
  registry: SkillRegistry;
  /** Per-attempt timeout when neither the skill nor the call sets one (default 30 000 ms). */
  defaultTimeoutMs?: number;
  /** Overall deadline across retries when the call sets none (default: none beyond the attempts). */
  defaultTotalTimeoutMs?: number;
  /** Deepest chain of nested `ctx.call` (default 16). */
  maxCallDepth?: number;
  logger?: SkillLogger & { child?(fields: Record<string, unknown>): SkillLogger };
  /** Extra runtimes besides `inline` and `worker` (a runtime with either name replaces it). */
  runtimes?: SkillRuntime[];
  /** Pool settings of the built-in `worker` runtime (threads start on first use). */
  worker?: WorkerRuntimeOptions;
  interceptors?: Interceptor[];
  /** Mark rows orphaned by dead processes `interrupted` on start (default true). */
  recoverInterrupted?: boolean;
}

/** Events of {@link SkillExecutor}. */
export interface SkillExecutorEvents {
  started: [SkillExecution];
  finished: [SkillExecution];
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
  private readonly handlers = new Map<string, SkillHandler>();
  private readonly resolvers: HandlerResolver[] = [];
  private readonly runtimes = new Map<string, SkillRuntime>();
  private readonly active = new Set<Promise<unknown>>();
  private readonly logger: SkillLogger & { child?(fields: Record<string, unknown>): SkillLogger };
  private readonly defaultTimeoutMs: number;
  private readonly defaultTotalTimeoutMs: number | undefined;
  private readonly maxCallDepth: number;
  private closed = false;

  constructor(options: SkillExecutorOptions) {
    super();
    this.registry = options.registry;
    this.store = new ExecutionStore(options.registry.database, randomUUID());
    this.idempotency = new IdempotencyGate(this.store);
    this.logger = options.logger ?? createConsoleLogger();
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? 30_000;
    this.defaultTotalTimeoutMs = options.defaultTotalTimeoutMs;
    this.maxCallDepth = options.maxCallDepth ?? 16;
    this.registerRuntime(createInlineRuntime());
    this.registerRuntime(createWorkerRuntime(options.worker));
    for (const runtime of options.runtimes ?? []) this.registerRuntime(runtime);
    for (const interceptor of options.interceptors ?? []) this.use(interceptor);
    if (options.recoverInterrupted !== false) this.store.markInterrupted();
  }

  /** Binds a handler function to the name skills use in their `handler` field. */
  registerHandler(name: string, handler: SkillHandler): void {
    if (typeof handler !== "function") {
      throw new SkillboxError(
        "REGISTRATION_INVALID",
        `registerHandler("${name}"): the handler must be a function`,
      );
    }
    this.handlers.set(name, handler);
  }

  /** Removes a handler registered with {@link registerHandler}. */
  unregisterHandler(name: string): boolean {
    return this.handlers.delete(name);
  }

  /** Adds a resolver consulted (in order) for handler references that are not registered names. Returns a remover. */
  addHandlerResolver(resolver: HandlerResolver): () => void {
    this.resolvers.push(resolver);
    return () => {
      const index = this.resolvers.indexOf(resolver);
      if (index >= 0) this.resolvers.splice(index, 1);
    };
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

  /** Number of executions matching the filters (pagination ignored). */
  countExecutions(filters: ExecutionFilters = {}): number {
    return this.store.count(filters);
  }

  /** Waits for running executions, commits the audit trail and closes runtimes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.active]);
    await this.store.close();
    await Promise.allSettled([...this.runtimes.values()].map((runtime) => runtime.close?.()));
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
    if (this.closed) return Promise.reject(new SkillboxError("BUSY", "The executor is closed"));
    const caller = options.apiKeyId ?? "public";
    let skill: Skill;
    try {
      skill = resolveSkillForCaller(this.registry, reference, caller);
    } catch (error) {
      return Promise.reject(error);
    }
    const promise =
      options.idempotencyKey === undefined
        ? this.run(skill, input, options, caller, depth)
        : this.idempotency.run(skill, caller, options.idempotencyKey, options.signal, () =>
            this.run(skill, input, options, caller, depth),
          );
    this.active.add(promise);
    const forget = () => this.active.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  private async run(
    skill: Skill,
    input: unknown,
    options: ExecuteOptions,
    caller: string,
    depth: number,
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
    const auditedInput = this.interceptors.applyAudit(interceptors, interceptorContext, "input", input);
    const record: SkillExecution = {
      id,
      skillId: skill.id,
      skillName: skill.name,
      skillVersion: skill.version,
      apiKeyId: caller,
      sessionId,
      parentExecutionId,
      idempotencyKey: options.idempotencyKey ?? null,
      input,
      output: null,
      status: "running",
      error: null,
      attempts: 0,
      duration: null,
      createdAt: new Date(createdAt).toISOString(),
      finishedAt: null,
    };
    const rowid = await this.store.start(record, serialize(auditedInput), createdAt);
    if (this.listenerCount("started") > 0) this.notify("started", { ...record });
    const attempts = { count: 0 };
    const outcome = await this.runLifecycle(
      skill,
      interceptors,
      interceptorContext,
      options,
      startedAt,
      attempts,
    );
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
        output = await this.runAttempts(skill, context, options, startedAt, attempts);
      }
      if (entered.length > 0) {
        const after = this.interceptors.runAfter(entered, context, {
          output,
          attempts: attempts.count,
          duration: performance.now() - startedAt,
        });
        output = isPromiseLike(after) ? await after : after;
      }
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

  private async runAttempts(
    skill: Skill,
    context: ExecutionState,
    options: ExecuteOptions,
    startedAt: number,
    attempts: { count: number },
  ): Promise<unknown> {
    const policy = resolveRetryPolicy(skill, options);
    const attemptTimeoutMs = options.timeoutMs ?? skill.timeoutMs ?? this.defaultTimeoutMs;
    const totalTimeoutMs = options.totalTimeoutMs ?? this.defaultTotalTimeoutMs;
    const deadline = totalTimeoutMs === undefined ? Number.POSITIVE_INFINITY : startedAt + totalTimeoutMs;
    const label = `${skill.name}@${skill.version}`;
    for (let attempt = 1; ; attempt++) {
      attempts.count = attempt;
      const remaining = deadline - performance.now();
      const capped = remaining < attemptTimeoutMs;
      try {
        return await runAttempt(
          {
            timeoutMs: capped ? remaining : attemptTimeoutMs,
            timeoutError: () =>
              capped
                ? new SkillboxError(
                    "TIMEOUT",
                    `${label} ran past its overall deadline of ${totalTimeoutMs} ms`,
                    {
                      retryable: false,
                    },
                  )
                : new SkillboxError(
                    "TIMEOUT",
                    `${label} attempt ${attempt} timed out after ${attemptTimeoutMs} ms`,
                  ),
            callerSignal: options.signal,
            cancelledError: () =>
              new SkillboxError("CANCELLED", `${label} was cancelled by the caller`, {
                data: { reason: String(options.signal?.reason) },
              }),
          },
          (abort) => this.invokeRuntime(skill, context, attempt, abort),
        );
      } catch (error) {
        if (attempt >= policy.maxAttempts || !isRetryable(error, policy)) throw error;
        const delay = retryDelay(policy, attempt);
        if (performance.now() + delay >= deadline) throw error;
        context.logger.debug("retrying", {
          skill: label,
          attempt,
          delay,
          code: (error as SkillboxError).code,
        });
        await sleep(delay, undefined, options.signal ? { signal: options.signal } : undefined).catch(() => {
          throw new SkillboxError("CANCELLED", `${label} was cancelled by the caller while waiting to retry`);
        });
      }
    }
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
      resolveHandler: () => this.resolveHandler(skill),
    });
  }

  private resolveHandler(skill: Skill): SkillHandler | Promise<SkillHandler> {
    return this.handlers.get(skill.handler) ?? this.resolveWithResolvers(skill);
  }

  private async resolveWithResolvers(skill: Skill): Promise<SkillHandler> {
    for (const resolver of this.resolvers) {
      const handler = await resolver(skill);
      if (handler !== undefined) return handler;
    }
    throw new SkillboxError(
      "HANDLER_NOT_FOUND",
      `${skill.name}@${skill.version}: no handler "${skill.handler}" is registered; call executor.registerHandler("${skill.handler}", fn)`,
    );
  }
}
