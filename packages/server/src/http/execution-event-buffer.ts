import type { ExecutionStreamEvent } from "@skillbox/core";
import type { LoaderActivity } from "./loader-activity.js";

/** Most status events kept for a client that is behind; older ones give way (each carries the whole record). */
export const MAX_PENDING_STATUS_EVENTS = 16;
/** Most `finished` events kept (a stream of many executions); the oldest unsent give way. */
export const MAX_PENDING_FINISHED_EVENTS = 16;
/** Most progress events kept, of different executions (of one, only the latest is kept). */
export const MAX_PENDING_PROGRESS_EVENTS = 16;
/** Most loader activities kept for a client that is behind; the oldest unsent give way. */
export const MAX_PENDING_ACTIVITY_EVENTS = 32;

/** A loader activity as a stream's buffer holds it. */
export interface ActivityStreamEvent {
  type: "activity";
  activity: LoaderActivity;
}

/** What an event stream's buffer holds: execution events and, on `GET /api/events`, loader activity. */
export type BufferedStreamEvent = ExecutionStreamEvent | ActivityStreamEvent;

/** What {@link ExecutionEventBuffer.next} resolves with when there is no event. */
export type BufferSignal = "idle" | "end";

/**
 * The events of one stream not yet written to its client, bounded however slow the client reads.
 * The executor's events are taken as fast as they come (so nothing piles up on its side) and
 * kept here: a progress report replaces the one of its execution still unsent (only the latest
 * matters to a client that is behind), and of each kind at most a fixed number waits (status 16,
 * finished 16, progress 16, activity 32), the oldest unsent going first. A stream of one
 * execution thus keeps its `finished` event always (it is the newest), and any stream holds at
 * most 80 events whatever the skills report and however slowly the client reads. Status,
 * finished and activity events given way are counted ({@link takeDropped}), so a stream can
 * tell its client it missed some.
 */
export class ExecutionEventBuffer<Event extends BufferedStreamEvent = ExecutionStreamEvent> {
  #events: Event[] = [];
  #dropped = 0;
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

  /** How many status, finished and activity events gave way since the last call; resets the count. */
  takeDropped(): number {
    const dropped = this.#dropped;
    this.#dropped = 0;
    return dropped;
  }

  push(event: Event): void {
    if (this.#ended) return;
    if (event.type === "progress") {
      const index = this.#events.findIndex(
        (pending) => pending.type === "progress" && pending.executionId === event.executionId,
      );
      if (index !== -1) this.#events.splice(index, 1);
      else this.#makeRoom("progress", MAX_PENDING_PROGRESS_EVENTS, false);
    } else if (event.type === "status") {
      this.#makeRoom("status", MAX_PENDING_STATUS_EVENTS, true);
    } else if (event.type === "finished") {
      this.#makeRoom("finished", MAX_PENDING_FINISHED_EVENTS, true);
    } else {
      this.#makeRoom("activity", MAX_PENDING_ACTIVITY_EVENTS, true);
    }
    this.#events.push(event);
    this.#notify();
  }

  /**
   * Takes `events` as fast as they come until they end (or, with `untilFinished`, after the
   * first `finished`), then ends the buffer — with the iterator's error when it threw. Never
   * rejects: a failure is the buffer's to report.
   */
  async readFrom(events: AsyncIterator<Event>, options: { untilFinished?: boolean } = {}): Promise<void> {
    try {
      for (;;) {
        const result = await events.next();
        if (result.done === true) break;
        this.push(result.value);
        if (options.untilFinished === true && result.value.type === "finished") break;
      }
      this.end();
    } catch (error) {
      this.end(error);
    }
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
  async next(idleMs: number, signal: AbortSignal): Promise<Event | BufferSignal> {
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

  /** Drops the oldest unsent event of `type` when `limit` of them wait. */
  #makeRoom(type: BufferedStreamEvent["type"], limit: number, counted: boolean): void {
    let count = 0;
    let oldest = -1;
    for (let index = 0; index < this.#events.length; index++) {
      if (this.#events[index]!.type !== type) continue;
      if (oldest === -1) oldest = index;
      count++;
    }
    if (count < limit) return;
    this.#events.splice(oldest, 1);
    if (counted) this.#dropped++;
  }

  #notify(): void {
    this.#wake?.();
  }
}
