import type { Tinypool } from "tinypool";

/** What tinypool's `threads` lists for `runtime: "worker_threads"`: a thin wrapper of a `Worker`. */
interface PoolThread {
  threadId: number;
  on(event: "exit", listener: (exitCode: number) => void): unknown;
  emit(event: "error", error: Error): boolean;
}

/**
 * Why a thread left the pool under a task: it `exited` by itself (`process.exit()` in a handler),
 * or the runtime `retired` it after an error escaped on it (a task refused there never ran).
 */
export class PoolThreadEnded extends Error {
  constructor(
    readonly reason: "exited" | "retired",
    readonly threadId: number,
    readonly exitCode?: number,
  ) {
    super(
      reason === "exited"
        ? `worker thread ${threadId} exited with exit code ${exitCode}`
        : `worker thread ${threadId} was retired`,
    );
    this.name = "PoolThreadEnded";
  }
}

/**
 * Tells a tinypool pool when one of its threads ends by itself, and takes a thread out on request.
 * Tinypool 2 learns of a dead thread only from its `error` event (it watches `exit` for child
 * processes, not threads), so a thread that called `process.exit()` stayed listed and its task
 * waited for a timeout. Both are reported the way tinypool handles a crashed thread: an `error`
 * on the thread, which drops it, fails its task with that error and starts a replacement.
 */
export class PoolThreads {
  private readonly watched = new WeakSet<PoolThread>();

  /**
   * `onStart` hears of each thread when it is first watched (before it can run a task, when
   * `watch()` follows whatever started it), `onExit` when it has exited, for whatever reason.
   */
  constructor(
    private readonly pool: Tinypool,
    private readonly hooks: { onStart?(threadId: number): void; onExit?(threadId: number): void } = {},
  ) {}

  /** Watches the threads started since the last call; call after anything that may start one. */
  watch(): void {
    for (const thread of this.threads()) {
      if (this.watched.has(thread)) continue;
      this.watched.add(thread);
      const { threadId } = thread;
      this.hooks.onStart?.(threadId);
      thread.on("exit", (exitCode) => {
        this.hooks.onExit?.(threadId);
        // Tinypool unlists a thread before it terminates it: one still listed ended by itself.
        if (this.threads().includes(thread)) {
          thread.emit("error", new PoolThreadEnded("exited", thread.threadId, exitCode));
        }
      });
    }
  }

  /** Takes the thread `threadId` out of the pool (no-op when it has left already). */
  retire(threadId: number): void {
    const thread = this.threads().find((candidate) => candidate.threadId === threadId);
    thread?.emit("error", new PoolThreadEnded("retired", threadId));
  }

  private threads(): PoolThread[] {
    return this.pool.threads as unknown as PoolThread[];
  }
}
