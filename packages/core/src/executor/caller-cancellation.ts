import { SkillboxError } from "../errors/skillbox-error.js";
import type { AttemptCancellation, CancellationWatcher } from "./run-attempt.js";

/**
 * The caller's `signal` as an {@link AttemptCancellation}: the attempt fails `CANCELLED`, naming
 * the signal's reason. One per execution, watched by one attempt (or retry wait) at a time; it
 * is itself the abort listener, so watching allocates nothing. `DispatchCancellation` watches
 * the same way and only words its error otherwise.
 */
export class CallerCancellation implements AttemptCancellation {
  private watcher: CancellationWatcher | undefined;

  constructor(protected readonly signal: AbortSignal) {}

  watch(watcher: CancellationWatcher): number {
    if (this.signal.aborted) return -1;
    this.watcher = watcher;
    this.signal.addEventListener("abort", this, { once: true });
    return 0;
  }

  /** Stops telling the current watcher (one at a time: the token is always 0). */
  unwatch(_token: number): void {
    if (this.watcher === undefined) return;
    this.watcher = undefined;
    this.signal.removeEventListener("abort", this);
  }

  /** The abort listener (an `EventListenerObject`). */
  handleEvent(): void {
    const watcher = this.watcher;
    this.watcher = undefined;
    watcher?.cancelledBy(this);
  }

  error(label: string): SkillboxError {
    return new SkillboxError("CANCELLED", `${label} was cancelled by the caller`, {
      data: { reason: String(this.signal.reason) },
    });
  }
}
