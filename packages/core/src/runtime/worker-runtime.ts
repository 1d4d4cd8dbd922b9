import { availableParallelism } from "node:os";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { Tinypool } from "tinypool";
import { isSkillboxError, SkillboxError } from "../errors/skillbox-error.js";
import type { Skill, SkillContext } from "../types.js";
import { handlerModulePath } from "./handler-module-path.js";
import { reviveError, type SerializedError } from "./revive-error.js";
import type { RuntimeRequest, SkillRuntime } from "./skill-runtime.js";

/** Options of {@link createWorkerRuntime}. */
export interface WorkerRuntimeOptions {
  /** Worker threads per pool (default: the number of cores). */
  maxThreads?: number;
  /** Threads kept alive while idle (default 0: a host that runs no worker skill starts none). */
  minThreads?: number;
  /** Milliseconds an idle thread lingers before it exits (default 30 000). */
  idleTimeoutMs?: number;
  /** Tasks that may wait, per pool and per skill, before `BUSY` (default 1 000). */
  maxQueue?: number;
  /** Executions of one skill version running at once (default: unlimited up to the pool). */
  maxConcurrencyPerSkill?: number;
}

interface WorkerResult {
  ok: boolean;
  output?: unknown;
  error?: SerializedError;
}

/** Where the worker entry lives: `worker/` beside `src/` and `dist/`, so both resolve it. */
const WORKER_ENTRY = new URL("../../worker/skill-worker.mjs", import.meta.url);

/** Answers a worker's `ctx.call` requests with nested executions on this thread. */
function serveCalls(port: MessagePort, context: SkillContext): void {
  port.on("message", ({ id, reference, input }: { id: number; reference: string; input: unknown }) => {
    context.call(reference, input).then(
      (output) => port.postMessage({ id, output }),
      (error: unknown) =>
        port.postMessage({
          id,
          error: {
            name: "SkillboxError",
            code: isSkillboxError(error) ? error.code : "HANDLER_ERROR",
            message: error instanceof Error ? error.message : String(error),
            data: isSkillboxError(error) ? cloneable(error.data) : undefined,
          },
        }),
    );
  });
}

/** `value` when it can cross a thread boundary, else undefined. */
function cloneable(value: unknown): unknown {
  try {
    return structuredClone(value);
  } catch {
    return undefined;
  }
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
  async enter(label: string, signal: AbortSignal): Promise<void> {
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
        signal.removeEventListener("abort", withdraw);
        resolve();
      };
      const withdraw = () => {
        const index = this.waiting.indexOf(admit);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal.reason);
      };
      this.waiting.push(admit);
      signal.addEventListener("abort", withdraw, { once: true });
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
 * that run it (one pool per limit); running out fails that execution with `OUT_OF_MEMORY` and the
 * host lives on. Pools start on first use.
 */
export function createWorkerRuntime(options: WorkerRuntimeOptions = {}): SkillRuntime & {
  /** Threads currently alive, over all pools. */
  threadCount(): number;
} {
  const pools = new Map<number, Tinypool>();
  const gates = new Map<string, Gate>();
  const maxQueue = options.maxQueue ?? 1_000;

  const poolFor = (memoryMb: number | undefined): Tinypool => {
    const key = memoryMb ?? 0;
    let pool = pools.get(key);
    if (pool === undefined) {
      pool = new Tinypool({
        filename: WORKER_ENTRY.href,
        maxThreads: options.maxThreads ?? availableParallelism(),
        minThreads: options.minThreads ?? 0,
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
      pools.set(key, pool);
    }
    return pool;
  };

  const gateFor = (skill: Skill): Gate | undefined => {
    if (options.maxConcurrencyPerSkill === undefined) return undefined;
    let gate = gates.get(skill.id);
    if (gate === undefined) {
      gate = new Gate(options.maxConcurrencyPerSkill, maxQueue);
      gates.set(skill.id, gate);
    }
    return gate;
  };

  const runTask = async (request: RuntimeRequest): Promise<unknown> => {
    const { skill, context } = request;
    const label = `${skill.name}@${skill.version}`;
    const modulePath = handlerModulePath(skill, "a worker thread");
    // Only skills that declare what they call get a channel back to this thread: it costs a
    // MessageChannel per task.
    const channel = skill.requires === undefined ? undefined : new MessageChannel();
    if (channel !== undefined) serveCalls(channel.port1, context);
    const task = {
      modulePath,
      codeHash: (skill.metadata as { codeHash?: string } | undefined)?.codeHash ?? skill.contentHash,
      input: request.input,
      context: {
        executionId: context.executionId,
        attempt: context.attempt,
        apiKeyId: context.apiKeyId,
        sessionId: context.sessionId,
        skill: { id: skill.id, name: skill.name, version: skill.version },
      },
      ...(channel === undefined ? {} : { port: channel.port2 }),
    };
    try {
      const result = (await poolFor(skill.memoryMb).run(task, {
        signal: context.signal,
        ...(channel === undefined ? {} : { transferList: [channel.port2] }),
      })) as WorkerResult;
      if (result.ok) return result.output;
      throw reviveError(result.error ?? { message: "the worker returned no result" });
    } catch (error) {
      throw translatePoolError(error, label, skill.memoryMb);
    } finally {
      channel?.port1.close();
    }
  };

  return {
    name: "worker",
    async run(request: RuntimeRequest): Promise<unknown> {
      const gate = gateFor(request.skill);
      if (gate === undefined) return runTask(request);
      try {
        await gate.enter(`${request.skill.name}@${request.skill.version}`, request.context.signal);
      } catch (error) {
        if (gate.idle) gates.delete(request.skill.id);
        throw error;
      }
      try {
        return await runTask(request);
      } finally {
        gate.leave();
        if (gate.idle) gates.delete(request.skill.id);
      }
    },
    threadCount() {
      return [...pools.values()].reduce((total, pool) => total + pool.threads.length, 0);
    },
    async close() {
      const all = [...pools.values()];
      pools.clear();
      await Promise.all(all.map((pool) => pool.destroy()));
    },
  };
}

/** Maps tinypool's failures to Skillbox codes; anything already coded passes through. */
function translatePoolError(error: unknown, label: string, memoryMb: number | undefined): unknown {
  if (isSkillboxError(error)) return error;
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
