import { setMaxListeners } from "node:events";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { AttemptCancellation, CancellationWatcher } from "./run-attempt.js";

/**
 * The host's shutdown, once `close()`'s grace period ran out: it cancels every running attempt
 * and ends every wait on another execution. Attempts watch it through slots of an array rather
 * than an `AbortSignal` listener each (adding and removing an event listener is a cost every
 * execution would pay, and the shutdown happens once) — nor a `Set`: one that many short-lived
 * entries pass through kept them alive across young-generation GCs, doubling the GC work of
 * every execution under load.
 */
export class HostShutdown implements AttemptCancellation {
  private readonly controller = new AbortController();
  /** Watchers by token; a freed slot holds `undefined` until a later watch reuses it. */
  private readonly watchers: (CancellationWatcher | undefined)[] = [];
  private readonly freeTokens: number[] = [];
  private graceMs = 0;

  constructor() {
    // Idempotent waits link to it: as many listeners as waits.
    setMaxListeners(0, this.controller.signal);
  }

  /** Aborted at shutdown: for waits that take a signal. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Cancels every attempt and wait; `graceMs` is the grace period their message names. */
  trigger(graceMs: number): void {
    this.graceMs = graceMs;
    this.controller.abort();
    const watchers = this.watchers.splice(0);
    this.freeTokens.length = 0;
    for (const watcher of watchers) watcher?.cancelledBy(this);
  }

  watch(watcher: CancellationWatcher): number {
    if (this.controller.signal.aborted) return -1;
    const token = this.freeTokens.pop() ?? this.watchers.length;
    this.watchers[token] = watcher;
    return token;
  }

  unwatch(token: number): void {
    // After the shutdown every slot is gone already; watchers that settle then free nothing.
    if (token >= this.watchers.length || this.watchers[token] === undefined) return;
    this.watchers[token] = undefined;
    this.freeTokens.push(token);
  }

  error(label: string): SkillboxError {
    return new SkillboxError(
      "CANCELLED",
      `${label} was cancelled because the host shut down: it was still running when the ${this.graceMs} ms shutdown grace period ran out`,
      { data: { reason: "shutdown", graceMs: this.graceMs } },
    );
  }
}
