import { SkillboxError } from "../errors/skillbox-error.js";
import type { AttemptCancellation, CancellationWatcher } from "./run-attempt.js";

/**
 * `cancel(id)` of one execution as an {@link AttemptCancellation}: the attempt under way (or the
 * wait before the next one) fails `CANCELLED` with the reason given. A cancel that comes before
 * the attempts start is kept, so the first attempt never starts. One attempt watches at a time.
 */
export class RunCancellation implements AttemptCancellation {
  private watcher: CancellationWatcher | undefined;
  private reason: string | undefined;

  /** Whether `cancel()` was called. */
  get cancelled(): boolean {
    return this.reason !== undefined;
  }

  /** Cancels the execution: its current attempt fails at once, and no other starts. */
  cancel(reason: string): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    const watcher = this.watcher;
    this.watcher = undefined;
    watcher?.cancelledBy(this);
  }

  watch(watcher: CancellationWatcher): number {
    if (this.reason !== undefined) return -1;
    this.watcher = watcher;
    return 0;
  }

  unwatch(_token: number): void {
    this.watcher = undefined;
  }

  error(label: string): SkillboxError {
    return new SkillboxError("CANCELLED", `${label} was cancelled: ${this.reason ?? "cancel() was called"}`, {
      data: { reason: this.reason ?? null },
    });
  }
}
