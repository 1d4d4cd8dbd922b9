/**
 * An abort source whose `AbortSignal` is created only when something reads it. Creating an
 * AbortController costs microseconds, and most handlers never look at `ctx.signal`.
 */
export class LazyAbortSignal {
  private controller: AbortController | undefined;
  private abortedWith: { reason: unknown } | undefined;

  /** The signal; aborted already if `abort()` ran before it was first read. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.abortedWith !== undefined) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  abort(reason: unknown): void {
    if (this.abortedWith !== undefined) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
  }
}
