import { BroadcastChannel } from "node:worker_threads";
import type { ProgressReport, SkillLogger } from "../types.js";
import type { RuntimeRequest } from "./skill-runtime.js";

/** What a worker thread posts for one `ctx.progress()` report (`skill-worker.mjs` sends it). */
type ThreadProgressMessage = [executionId: string, attempt: number, report: unknown];

/** An attempt on a thread whose reports are being handed to its context. */
export interface ProgressTarget {
  request: RuntimeRequest;
  /** Reports handed to `context.progress` so far. */
  progressReceived?: number;
  /** How many the thread said it sent, while its result waits for the rest. */
  progressExpected?: number;
  /** Set while the result waits: called once the reports it counts have all arrived. */
  progressArrived?: (() => void) | undefined;
}

/**
 * How long a result whose thread said it sent more progress reports than arrived waits for them.
 * They were posted before the result, so they come within turns; this only bounds a thread that
 * died with them unsent.
 */
const PROGRESS_ARRIVAL_MS = 1_000;

/**
 * The worker runtime's side of `ctx.progress()`: one channel per worker thread, opened when the
 * pool first lists the thread (before it can run a task) and closed when it exits. A thread opens
 * its end, named by its thread id, on its first report, so tasks that never report cost nothing.
 * A channel named per thread has just those two ends: no thread receives (and queues, while it
 * waits idle in `Atomics.wait`) what another reports. Reports go to the attempt they name, while
 * it runs; a report of an attempt that ended, or was aborted, is dropped.
 */
export class ThreadProgress {
  private readonly channels = new Map<number, BroadcastChannel>();
  private readonly targets = new Map<string, ProgressTarget>();

  constructor(private readonly logger: SkillLogger) {}

  /** Opens the host's end for thread `threadId` (no-op when open). */
  threadStarted(threadId: number): void {
    if (this.channels.has(threadId)) return;
    const channel = new BroadcastChannel(`skillbox:progress:${threadId}`);
    // It must not keep the host's process alive.
    channel.unref();
    channel.onmessage = (event) => {
      const data = (event as MessageEvent).data as unknown;
      if (Array.isArray(data) && typeof data[0] === "string" && typeof data[1] === "number") {
        this.deliver(data as ThreadProgressMessage);
      }
    };
    this.channels.set(threadId, channel);
  }

  /** Closes the host's end for thread `threadId`, once the reports already queued were handled. */
  threadExited(threadId: number): void {
    const channel = this.channels.get(threadId);
    if (channel === undefined) return;
    this.channels.delete(threadId);
    // A report posted just before the thread exited may still wait in the channel's queue.
    setImmediate(() => channel.close());
  }

  /** Hands the reports of `target`'s attempt to its context from now on. */
  track(target: ProgressTarget): void {
    this.targets.set(target.request.context.executionId, target);
  }

  /** Stops handing reports of `target`'s attempt on: its result is in. */
  forget(target: ProgressTarget): void {
    const id = target.request.context.executionId;
    if (this.targets.get(id) === target) this.targets.delete(id);
  }

  /**
   * Resolves once `expected` reports of the attempt arrived (a thread's result counts what it
   * sent before it, on a channel that may deliver them after the result), or at the latest
   * after {@link PROGRESS_ARRIVAL_MS}; at once when they have.
   */
  untilReported(target: ProgressTarget, expected: number): Promise<void> | undefined {
    if ((target.progressReceived ?? 0) >= expected) return undefined;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => target.progressArrived?.(), PROGRESS_ARRIVAL_MS);
      target.progressExpected = expected;
      target.progressArrived = () => {
        clearTimeout(timer);
        target.progressArrived = undefined;
        resolve();
      };
    });
  }

  /** Closes every channel (the runtime is closing). */
  close(): void {
    for (const channel of this.channels.values()) channel.close();
    this.channels.clear();
    this.targets.clear();
  }

  private deliver([executionId, attempt, report]: ThreadProgressMessage): void {
    const target = this.targets.get(executionId);
    if (target === undefined || target.request.context.attempt !== attempt || target.request.abort.aborted)
      return;
    target.progressReceived = (target.progressReceived ?? 0) + 1;
    try {
      target.request.context.progress(report as ProgressReport);
    } catch (error) {
      this.logger.warn("a progress report of a worker skill failed on the host; it was dropped", {
        executionId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
    if (target.progressArrived !== undefined && target.progressReceived >= (target.progressExpected ?? 0)) {
      target.progressArrived();
    }
  }
}
