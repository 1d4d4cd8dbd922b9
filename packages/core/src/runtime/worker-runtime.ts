import { availableParallelism } from "node:os";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { context as otelContext, trace } from "@opentelemetry/api";
import { Tinypool } from "tinypool";
import { reviveError } from "../errors/revive-error.js";
import { type SerializedError, serializeError } from "../errors/serialize-error.js";
import { isSkillboxError, SkillboxError } from "../errors/skillbox-error.js";
import { createConsoleLogger } from "../logger/create-console-logger.js";
import {
  callContextAtBoundary,
  endRelayBoundary,
  isTracing,
  type RelayBoundary,
  replayAtBoundary,
  startRelayBoundary,
} from "../telemetry/relay-boundary.js";
import type { RelayedSpans } from "../telemetry/span-relay.js";
import { workerPoolGauge } from "../telemetry/worker-pool-gauge.js";
import type { ExecutionApproval, Skill, SkillContext, SkillLogger } from "../types.js";
import { handlerModulePath } from "./handler-module-path.js";
import { PoolThreadEnded, PoolThreads } from "./pool-threads.js";
import type { RuntimeAbort, RuntimeRequest, SkillRuntime } from "./skill-runtime.js";
import { type ProgressTarget, ThreadProgress } from "./thread-progress.js";

/** Options of {@link createWorkerRuntime}. */
export interface WorkerRuntimeOptions {
  /**
   * Worker threads per pool (default: the number of cores). There is a pool per `memoryMb` and per
   * `ctx.call` depth, each started on first use.
   */
  maxThreads?: number;
  /**
   * Threads each top-level pool keeps alive while idle (default 0: a host that runs no worker
   * skill starts none). The pools of nested `ctx.call` executions keep none.
   */
  minThreads?: number;
  /** Milliseconds an idle thread lingers before it exits (default 30 000). */
  idleTimeoutMs?: number;
  /** Tasks that may wait, per pool and per skill, before `BUSY` (default 1 000). */
  maxQueue?: number;
  /**
   * Executions of one skill version running at once, per `ctx.call` depth (default: unlimited up
   * to the pool). Per depth, so a skill that calls itself never waits for its own slot.
   */
  maxConcurrencyPerSkill?: number;
  /** Where errors that escape a finished task are reported (the executor passes its logger). */
  logger?: SkillLogger;
}

/** An error that escaped on a thread after its task ended, as the worker reports it. */
interface StrayError {
  error: SerializedError;
  executionId?: string;
  skill?: string;
}

interface WorkerResult {
  ok: boolean;
  output?: unknown;
  error?: SerializedError;
  /** The thread refused the task without running it: it is being retired. */
  refused?: boolean;
  /** The thread does not know the task's `code` (it never ran that skill version): send it again with `introduce`. */
  unknownCode?: boolean;
  /** An error escaped on that thread: it must leave the pool. */
  retire?: boolean;
  threadId?: number;
  strays?: StrayError[];
  /** How many `ctx.progress()` reports the thread sent for the task (absent: none). */
  progressSent?: number;
  /** The spans the task ended, when it ran traced (`traceparent` in the task). */
  spans?: RelayedSpans;
}

/** A pool and what watches its threads. */
interface Pool {
  tinypool: Tinypool;
  threads: PoolThreads;
  /** How `describe()` names it: `threads`, with its heap limit and call depth when it has them. */
  label: string;
  /** Tasks handed to it and not settled (a thread runs one at a time). */
  tasksOut: number;
  /** The skill versions whose code this pool's threads were sent (each thread learns it once). */
  introduced: WeakSet<SkillCodeRef>;
}

/**
 * What a thread needs to know once about a skill version to run its tasks: the module, its code
 * hash, and the skill as `ctx.skill` shows it.
 */
interface SkillCodeIntroduction {
  modulePath: string;
  codeHash: string;
  skill: { id: string; name: string; version: string };
}

/**
 * A skill version as this runtime's tasks name it: a number the threads map to its
 * {@link SkillCodeIntroduction}, worked out on its first execution.
 */
interface SkillCodeRef {
  code: number;
  introduction: SkillCodeIntroduction;
}

/** One attempt on its way to a thread: what it runs, the pool it runs in, and its progress. */
interface PoolJob extends ProgressTarget {
  ref: SkillCodeRef;
  pool: Pool;
  /** The `worker dispatch` span, when the attempt is traced. */
  boundary?: RelayBoundary;
}

/**
 * The message a thread gets for one attempt (`skill-worker.mjs` reads it). The skill's module
 * path, hash and identity travel in `introduce` only when the thread may not know `code` yet:
 * every field and string of a task is paid for by the structured clone of every task, twice.
 */
interface WorkerTask {
  code: number;
  introduce?: SkillCodeIntroduction;
  input: unknown;
  executionId: string;
  attempt: number;
  apiKeyId: SkillContext["apiKeyId"];
  sessionId: SkillContext["sessionId"];
  /** The granted approval `ctx.approval` shows; absent when there is none (most tasks). */
  approval?: ExecutionApproval;
  /** The `worker dispatch` span the handler runs under; absent when nothing is traced (most tasks). */
  traceparent?: string;
  tracestate?: string;
  port?: MessagePort;
}

/**
 * The exit code a worker thread ends itself with when an error escapes outside any task, so that
 * the task whose result never came fails at once (`skill-worker.mjs` uses the same number).
 */
const UNSENT_RESULT_EXIT_CODE = 70;

/** Where the worker entry lives: `worker/` beside `src/` and `dist/`, so both resolve it. */
const WORKER_ENTRY = new URL("../../worker/skill-worker.mjs", import.meta.url);

/** A worker's `ctx.call` request; `traceparent` names the worker's span active at the call, when traced. */
interface CallRequest {
  id: number;
  reference: string;
  input: unknown;
  traceparent?: string;
  tracestate?: string;
}

/**
 * Answers a worker's `ctx.call` requests with nested executions on this thread. A failure goes
 * back as a `SkillboxError` (anything else a nested execution threw becomes its `HANDLER_ERROR`),
 * which the worker revives for the handler as an inline handler would have caught it. A traced
 * call runs under the worker's span it came from (see `callContextAtBoundary`).
 */
function serveCalls(port: MessagePort, context: SkillContext, boundary: RelayBoundary | undefined): void {
  port.on("message", ({ id, reference, input, traceparent, tracestate }: CallRequest) => {
    const calling =
      boundary === undefined
        ? context.call(reference, input)
        : otelContext.with(callContextAtBoundary(boundary, traceparent, tracestate), () =>
            context.call(reference, input),
          );
    calling.then(
      (output) => port.postMessage({ id, output }),
      (error: unknown) => {
        const failure = isSkillboxError(error)
          ? error
          : new SkillboxError("HANDLER_ERROR", error instanceof Error ? error.message : String(error));
        port.postMessage({ id, error: serializeError(failure) });
      },
    );
  });
}

/** A counting semaphore with a bounded wait list. */
class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly maxWaiting: number,
  ) {}

  /** Waits for a slot; a cancelled or timed-out execution gives its place in line back. */
  async enter(label: string, abort: RuntimeAbort): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return;
    }
    if (this.waiting.length >= this.maxWaiting) {
      throw new SkillboxError(
        "BUSY",
        `${label}: ${this.active} running and ${this.waiting.length} waiting (the limit); try again later`,
        { retryable: true },
      );
    }
    await new Promise<void>((resolve, reject) => {
      const admit = () => {
        abort.off("abort", withdraw);
        resolve();
      };
      const withdraw = () => {
        const index = this.waiting.indexOf(admit);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(abort.reason);
      };
      this.waiting.push(admit);
      abort.once("abort", withdraw);
    });
  }

  leave(): void {
    const next = this.waiting.shift();
    if (next !== undefined) next();
    else this.active--;
  }

  get idle(): boolean {
    return this.active === 0 && this.waiting.length === 0;
  }
}

/**
 * Runs skills with `runtime: "worker"` in tinypool worker threads. The executor's timeout or the
 * caller's cancellation aborts the task, and tinypool terminates the thread running it — a CPU
 * loop is stopped — then replaces it. A skill's `memoryMb` becomes the heap limit of the threads
 * that run it (one pool per limit); running out fails that execution with `OUT_OF_MEMORY`. A
 * handler that calls `process.exit()` fails at once with `WORKER_EXITED`; an error that escapes
 * a handler (a timer, a rejection nobody handles) fails its own execution while it runs, and
 * after it ended is logged on the host, never handed to another execution — either way the thread
 * is replaced. Executions nested through `ctx.call` run in a pool of their own per call depth, so
 * a parent waiting for its child never holds the thread the child needs. Pools start on first use.
 * `ctx.progress()` reports reach the host's `context.progress` in order while the attempt runs (a
 * flood is thinned to a burst and then the latest report per 50 ms); `ctx.approval` is the host's.
 *
 * Worker threads bound a handler's loops and heap; they do not contain hostile code, which shares
 * the host's process (`process.kill(process.pid)` ends it): run untrusted code in containers.
 */
export function createWorkerRuntime(options: WorkerRuntimeOptions = {}): SkillRuntime & {
  /** Threads currently alive, over all pools. */
  threadCount(): number;
} {
  const pools = new Map<string, Pool>();
  /** Set by close(): tinypool then fails queued tasks with "Terminating worker thread" on purpose. */
  let closing = false;
  const gates = new Map<string, Gate>();
  const maxQueue = options.maxQueue ?? 1_000;
  const maxThreads = options.maxThreads ?? availableParallelism();
  const logger = options.logger ?? createConsoleLogger();
  const progress = new ThreadProgress(logger);
  /** What `skillbox.worker_pool.threads` reads: `tasksOut` are the busy threads, when fewer than the threads. */
  const observed = {
    tasksOut: 0,
    threadCount: () => [...pools.values()].reduce((total, pool) => total + pool.tinypool.threads.length, 0),
  };
  workerPoolGauge.track(observed);

  const poolFor = (memoryMb: number | undefined, depth: number): Pool => {
    const key = `${memoryMb ?? 0}/${depth}`;
    let pool = pools.get(key);
    if (pool === undefined) {
      const tinypool = new Tinypool({
        filename: WORKER_ENTRY.href,
        maxThreads,
        // Pools of nested calls keep none: there may be one per call depth (up to the executor's
        // maxCallDepth) and per memory limit, and a burst of deep calls must not leave their
        // threads alive once idle.
        minThreads: depth === 0 ? (options.minThreads ?? 0) : 0,
        idleTimeout: options.idleTimeoutMs ?? 30_000,
        maxQueue,
        ...(memoryMb === undefined
          ? {}
          : {
              resourceLimits: {
                maxOldGenerationSizeMb: memoryMb,
                maxYoungGenerationSizeMb: Math.min(32, memoryMb / 4),
              },
            }),
      });
      const threads = new PoolThreads(tinypool, {
        onStart: (threadId) => progress.threadStarted(threadId),
        onExit: (threadId) => progress.threadExited(threadId),
      });
      // Tinypool emits a thread's failure here when no task was on it (it replaced the thread).
      tinypool.on("error", (error: unknown) => {
        threads.watch();
        if (error instanceof PoolThreadEnded && error.reason === "retired") return;
        logger.error("a worker thread failed while no task ran on it; it was replaced", {
          error: error instanceof Error ? error.message : String(error),
        });
      });
      threads.watch();
      pool = { tinypool, threads, label: poolLabel(memoryMb, depth), tasksOut: 0, introduced: new WeakSet() };
      pools.set(key, pool);
    }
    return pool;
  };

  const gateFor = (skill: Skill, depth: number): Gate | undefined => {
    if (options.maxConcurrencyPerSkill === undefined) return undefined;
    const key = `${skill.id}/${depth}`;
    let gate = gates.get(key);
    if (gate === undefined) {
      gate = new Gate(options.maxConcurrencyPerSkill, maxQueue);
      gates.set(key, gate);
    }
    return gate;
  };

  /** Logs what escaped on a thread after its task ended, and takes that thread out of its pool. */
  const retire = (pool: Pool, result: WorkerResult): void => {
    for (const stray of result.strays ?? []) {
      logger.error("an error escaped a worker skill after its execution ended; its thread was replaced", {
        skill: stray.skill,
        executionId: stray.executionId,
        threadId: result.threadId,
        error: stray.error.message,
        stack: stray.error.stack,
      });
    }
    if (result.threadId !== undefined) pool.threads.retire(result.threadId);
  };

  /** {@link SkillCodeRef} by skill version: a registered skill is never changed in place. */
  const codeRefs = new WeakMap<Skill, SkillCodeRef>();
  let lastCode = 0;
  const codeRefOf = (skill: Skill): SkillCodeRef => {
    let ref = codeRefs.get(skill);
    if (ref === undefined) {
      ref = {
        code: ++lastCode,
        introduction: {
          modulePath: handlerModulePath(skill, "a worker thread"),
          codeHash: skill.code?.codeHash ?? skill.contentHash,
          skill: { id: skill.id, name: skill.name, version: skill.version },
        },
      };
      codeRefs.set(skill, ref);
    }
    return ref;
  };

  /**
   * Runs one attempt on a thread; a task a retiring thread refused runs on another. When the
   * attempt is traced, a `worker dispatch` span covers it, and the spans the handler made in the
   * thread are replayed under it.
   */
  const runTask = (request: RuntimeRequest): Promise<unknown> => {
    let ref: SkillCodeRef;
    let pool: Pool;
    try {
      ref = codeRefOf(request.skill);
      pool = poolFor(request.skill.memoryMb, request.depth ?? 0);
    } catch (error) {
      return Promise.reject(error);
    }
    // An SDK installed after this runtime was made gets the gauge too.
    workerPoolGauge.refresh();
    if (!isTracing()) return dispatch({ request, ref, pool }, 1, false);
    const boundary = startRelayBoundary(tracer(), "worker dispatch", {
      "skillbox.runtime": "worker",
      "gen_ai.tool.name": request.skill.name,
    });
    if (boundary === undefined) return dispatch({ request, ref, pool }, 1, false);
    return dispatch({ request, ref, pool, boundary }, 1, false).then(
      (output) => {
        endRelayBoundary(boundary);
        return output;
      },
      (error: unknown) => {
        endRelayBoundary(boundary, error);
        throw error;
      },
    );
  };

  /**
   * Hands the attempt to the pool (its `dispatchCount`-th try: a thread that was being retired
   * may refuse it or fail it unrun, and it goes to another; one that does not know the skill's
   * code asks for it, and gets it with `introduce`). No async function: each costs turns.
   */
  const dispatch = (job: PoolJob, dispatchCount: number, introduce: boolean): Promise<unknown> => {
    const { request, ref, pool } = job;
    const { skill, context } = request;
    // Only skills that declare what they call get a channel back to this thread: it costs a
    // MessageChannel per task.
    const channel = skill.requires === undefined ? undefined : new MessageChannel();
    const task: WorkerTask = {
      code: ref.code,
      input: request.input,
      executionId: context.executionId,
      attempt: context.attempt,
      apiKeyId: context.apiKeyId,
      sessionId: context.sessionId,
    };
    const approval = context.approval;
    if (approval != null) task.approval = approval;
    const { boundary } = job;
    if (boundary !== undefined) {
      task.traceparent = boundary.traceparent;
      if (boundary.tracestate !== undefined) task.tracestate = boundary.tracestate;
    }
    if (introduce || !pool.introduced.has(ref)) {
      task.introduce = ref.introduction;
      pool.introduced.add(ref);
    }
    let running: Promise<WorkerResult>;
    try {
      if (channel === undefined) {
        running = pool.tinypool.run(task, { signal: request.abort });
      } else {
        serveCalls(channel.port1, context, boundary);
        task.port = channel.port2;
        running = pool.tinypool.run(task, { signal: request.abort, transferList: [channel.port2] });
      }
    } catch (error) {
      channel?.port1.close();
      return Promise.reject(translatePoolError(error, labelOf(skill), skill.memoryMb));
    }
    // A thread this task started is listed by now, before it can run anything. Threads start
    // only here and when one fails or is retired or aborted, which the rejection below (or the
    // pool's `error` event) follows with a watch of its own.
    pool.threads.watch();
    progress.track(job);
    observed.tasksOut++;
    pool.tasksOut++;
    return running.then(
      (result) => {
        observed.tasksOut--;
        pool.tasksOut--;
        channel?.port1.close();
        const reported =
          result.progressSent === undefined ? undefined : progress.untilReported(job, result.progressSent);
        if (reported !== undefined) return reported.then(() => settle(job, task, dispatchCount, result));
        return settle(job, task, dispatchCount, result);
      },
      (error: unknown) => {
        observed.tasksOut--;
        pool.tasksOut--;
        channel?.port1.close();
        progress.forget(job);
        pool.threads.watch();
        // Tinypool handed it to a thread as that thread was retired: it never ran there.
        if (error instanceof PoolThreadEnded && error.reason === "retired") {
          return dispatch(job, dispatchCount + 1, task.introduce !== undefined);
        }
        // Tinypool posted it to a thread this runtime was retiring, after that thread's tasks were
        // failed over and before it terminated (seen in CI): a retiring thread runs nothing, so it
        // never ran. Bounded, in case a thread keeps dying under it for another reason.
        if (!closing && isThreadTermination(error) && dispatchCount < MAX_DISPATCHES) {
          return dispatch(job, dispatchCount + 1, task.introduce !== undefined);
        }
        throw translatePoolError(error, labelOf(skill), skill.memoryMb);
      },
    );
  };

  /** What the thread's result means for the attempt: its outcome, or another dispatch. */
  const settle = (job: PoolJob, task: WorkerTask, dispatchCount: number, result: WorkerResult): unknown => {
    const { pool, boundary } = job;
    progress.forget(job);
    if (boundary !== undefined && result.spans !== undefined) {
      if (result.threadId !== undefined) boundary.span.setAttribute("thread.id", result.threadId);
      replayAtBoundary(tracer(), boundary, result.spans);
    }
    if (result.retire === true) retire(pool, result);
    // A task that carried the introduction and never ran carries it again to the next thread.
    if (result.refused === true) return dispatch(job, dispatchCount + 1, task.introduce !== undefined);
    if (result.unknownCode === true) return dispatch(job, dispatchCount + 1, true);
    if (result.ok) return result.output;
    throw reviveError(result.error ?? { message: "the worker returned no result" });
  };

  /** Waits for the skill's slot at `depth`, then runs the attempt. */
  const runGated = async (request: RuntimeRequest, gate: Gate, depth: number): Promise<unknown> => {
    const key = `${request.skill.id}/${depth}`;
    try {
      await gate.enter(labelOf(request.skill), request.abort);
    } catch (error) {
      if (gate.idle) gates.delete(key);
      throw error;
    }
    try {
      return await runTask(request);
    } finally {
      gate.leave();
      if (gate.idle) gates.delete(key);
    }
  };

  return {
    name: "worker",
    run(request: RuntimeRequest): Promise<unknown> {
      const depth = request.depth ?? 0;
      const gate = gateFor(request.skill, depth);
      return gate === undefined ? runTask(request) : runGated(request, gate, depth);
    },
    threadCount: observed.threadCount,
    describe() {
      const all = [...pools.values()];
      return {
        details: {
          isolation: "worker thread",
          maxThreads,
          minThreads: options.minThreads ?? 0,
          idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
          maxQueue,
          maxConcurrencyPerSkill: options.maxConcurrencyPerSkill ?? null,
          threads: observed.threadCount(),
          queued: all.reduce((total, pool) => total + pool.tinypool.queueSize, 0),
        },
        pools: all.map((pool) => {
          const size = pool.tinypool.threads.length;
          const busy = Math.min(pool.tasksOut, size);
          return { name: pool.label, size, idle: size - busy, busy, max: maxThreads };
        }),
      };
    },
    async close() {
      closing = true;
      workerPoolGauge.untrack(observed);
      const all = [...pools.values()];
      pools.clear();
      await Promise.all(all.map((pool) => pool.tinypool.destroy()));
      progress.close();
    },
  };
}

/** Core's tracer, looked up only for a traced attempt (the SDK may be installed after the runtime). */
function tracer() {
  return trace.getTracer("@skillbox/core");
}

/** A pool's name in `describe()`: `threads`, `threads, 256 MiB heap`, `threads, ctx.call depth 2`. */
function poolLabel(memoryMb: number | undefined, depth: number): string {
  const parts = ["threads"];
  if (memoryMb !== undefined) parts.push(`${memoryMb} MiB heap`);
  if (depth > 0) parts.push(`ctx.call depth ${depth}`);
  return parts.join(", ");
}

/** `name@version`, as errors name a skill. */
function labelOf(skill: Skill): string {
  return `${skill.name}@${skill.version}`;
}

/** How many threads one attempt may be handed to before a thread's termination is its outcome. */
const MAX_DISPATCHES = 8;

/** Tinypool's error for a task whose thread was terminated under it (its message is all it has). */
function isThreadTermination(error: unknown): boolean {
  return error instanceof Error && error.message === "Terminating worker thread";
}

/** Maps tinypool's failures to Skillbox codes; anything already coded passes through. */
function translatePoolError(error: unknown, label: string, memoryMb: number | undefined): unknown {
  if (isSkillboxError(error)) return error;
  if (error instanceof PoolThreadEnded) {
    // Exiting is what the code does, not a fault of the moment: a retry would exit again.
    if (error.exitCode === UNSENT_RESULT_EXIT_CODE) {
      return new SkillboxError(
        "WORKER_EXITED",
        `${label}: its worker thread ended itself with exit code ${error.exitCode} while it ran: an error escaped outside any task, as when the worker could not send the task's result back (the thread's log line on stderr names the error), or the handler called process.exit(${error.exitCode})`,
        { cause: error, retryable: false, data: { exitCode: error.exitCode } },
      );
    }
    return new SkillboxError(
      "WORKER_EXITED",
      `${label}: its worker thread exited with exit code ${error.exitCode} while it ran (process.exit() in a handler ends the thread); return or throw instead`,
      { cause: error, retryable: false, data: { exitCode: error.exitCode } },
    );
  }
  const code = (error as { code?: string } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === "ERR_WORKER_OUT_OF_MEMORY") {
    return new SkillboxError(
      "OUT_OF_MEMORY",
      `${label} ran out of memory in its worker thread${memoryMb === undefined ? "" : ` (limit ${memoryMb} MiB, set by \`memoryMb\`)`}`,
      { cause: error, retryable: false },
    );
  }
  if (message === "Task queue is at limit") {
    return new SkillboxError("BUSY", `${label}: the worker pool's queue is full; try again later`, {
      cause: error,
      retryable: true,
    });
  }
  return error;
}
