/**
 * An abort source whose `AbortSignal` is created only when something reads it. Creating an
 * AbortController (and listening on its signal) costs microseconds, and most handlers never
 * look at `ctx.signal`. It is also the emitter runtimes listen on (`aborted`, `once`, `off`, the
 * shape tinypool accepts as a task's signal), so a runtime that only needs to know when the
 * attempt is aborted never creates the AbortSignal.
 */
export class LazyAbortSignal {
  private controller: AbortController | undefined;
  private abortedWith: { reason: unknown } | undefined;
  /** Told once on abort, then dropped. Mostly one (the runtime's), so no array until a second. */
  private listener: (() => void) | undefined;
  private moreListeners: (() => void)[] | undefined;

  /** The signal; aborted already if `abort()` ran before it was first read. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.abortedWith !== undefined) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  /** Whether `abort()` ran. */
  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  /** What `abort()` was called with; undefined until then. */
  get reason(): unknown {
    return this.abortedWith?.reason;
  }

  /** Calls `listener` once, when `abort()` runs (never, if it ran already: check `aborted`). */
  once(_event: "abort", listener: () => void): void {
    if (this.abortedWith !== undefined) return;
    if (this.listener === undefined) this.listener = listener;
    else if (this.moreListeners === undefined) this.moreListeners = [listener];
    else this.moreListeners.push(listener);
  }

  /** Stops telling `listener` (added with `once`). */
  off(_event: "abort", listener: () => void): void {
    if (this.listener === listener) {
      this.listener = this.moreListeners?.shift();
      return;
    }
    const index = this.moreListeners?.indexOf(listener) ?? -1;
    if (index >= 0) this.moreListeners!.splice(index, 1);
  }

  /** Aborts the signal (now, or when it is first read) with `reason`; later calls do nothing. */
  abort(reason: unknown): void {
    if (this.abortedWith !== undefined) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
    const { listener, moreListeners } = this;
    this.listener = undefined;
    this.moreListeners = undefined;
    listener?.();
    if (moreListeners !== undefined) for (const more of moreListeners) more();
  }
}
