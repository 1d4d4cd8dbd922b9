import type { ExecutionStreamEvent } from "@skillbox/core";

/** Most status events kept for a client that is behind; older ones give way (each carries the whole record). */
export const MAX_PENDING_STATUS_EVENTS = 16;

/** What {@link ExecutionEventBuffer.next} resolves with when there is no event. */
export type BufferSignal = "idle" | "end";

/**
 * The events of one stream not yet written to its client, bounded however slow the client reads.
 * The executor's events are taken as fast as they come (so nothing piles up on its side) and
 * kept here: a progress report replaces the one still unsent (only the latest matters to a
 * client that is behind), at most {@link MAX_PENDING_STATUS_EVENTS} status events are kept (the
 * oldest unsent go first), and the `finished` event is always kept. So a stream holds at most
 * 18 events whatever the skill reports and however slowly the client reads.
 */
export class ExecutionEventBuffer {
  #events: ExecutionStreamEvent[] = [];
  #ended = false;
  #failure: unknown;
  #wake: (() => void) | undefined;

  /** How many events wait to be written. */
  get size(): number {
    return this.#events.length;
  }

  /** Why the events ended early (the executor's iterator threw), if they did. */
  get failure(): unknown {
    return this.#failure;
  }

  push(event: ExecutionStreamEvent): void {
    if (this.#ended) return;
    if (event.type === "progress") {
      const index = this.#events.findIndex(
        (pending) => pending.type === "progress" && pending.executionId === event.executionId,
      );
      if (index !== -1) this.#events.splice(index, 1);
    } else if (event.type === "status") {
      const statuses = this.#events.filter((pending) => pending.type === "status");
      if (statuses.length >= MAX_PENDING_STATUS_EVENTS)
        this.#events.splice(this.#events.indexOf(statuses[0]!), 1);
    }
    this.#events.push(event);
    this.#notify();
  }

  /** No more events will come; `failure` says why when it is not the normal end. */
  end(failure?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#failure = failure;
    this.#notify();
  }

  /**
   * The next event; `"idle"` when none came for `idleMs` (time for a heartbeat); `"end"` once
   * the buffer is empty and ended, or `signal` aborted.
   */
  async next(idleMs: number, signal: AbortSignal): Promise<ExecutionStreamEvent | BufferSignal> {
    const event = this.#events.shift();
    if (event !== undefined) return event;
    if (this.#ended || signal.aborted) return "end";
    const woken = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => finish(false), idleMs);
      const onAbort = () => finish(true);
      const finish = (wokenUp: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.#wake = undefined;
        resolve(wokenUp);
      };
      this.#wake = () => finish(true);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    if (!woken) return "idle";
    return this.#events.shift() ?? "end";
  }

  #notify(): void {
    this.#wake?.();
  }
}
