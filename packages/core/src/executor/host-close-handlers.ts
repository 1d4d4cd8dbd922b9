import { SkillboxError } from "../errors/skillbox-error.js";
import type { HostCloseHandler, HostLifecycle } from "../types.js";

/**
 * The cleanup a host runs when it closes: what skills and plugins register through
 * `ctx.hostLifecycle.onClose` or `executor.onClose` for resources that outlive one execution (a
 * browser, a connection pool). Without it such a resource keeps the process alive after the
 * host closed.
 */
export class HostCloseHandlers {
  private readonly handlers = new Set<HostCloseHandler>();
  private closed = false;
  /** What handlers see as `ctx.hostLifecycle`: only `onClose`, so the executor itself stays out of their reach. */
  readonly lifecycle: HostLifecycle = Object.freeze({
    onClose: (handler: HostCloseHandler) => this.add(handler),
  });

  constructor(private readonly onFailure: (error: unknown) => void) {}

  /** Registers `handler` (once); after {@link runAll} it runs at once instead. Returns an unregister function. */
  add(handler: HostCloseHandler): () => void {
    if (typeof handler !== "function") {
      throw new SkillboxError("REGISTRATION_INVALID", "onClose(handler): the handler must be a function");
    }
    if (this.closed) {
      // A late registration (an abandoned handler still running after close) must not leak.
      void this.runOne(handler);
      return () => {};
    }
    this.handlers.add(handler);
    return () => {
      this.handlers.delete(handler);
    };
  }

  /** Runs every registered handler, newest first (a later resource may depend on an earlier one). */
  async runAll(): Promise<void> {
    this.closed = true;
    const handlers = [...this.handlers].reverse();
    this.handlers.clear();
    for (const handler of handlers) await this.runOne(handler);
  }

  private async runOne(handler: HostCloseHandler): Promise<void> {
    try {
      await handler();
    } catch (error) {
      this.onFailure(error);
    }
  }
}
