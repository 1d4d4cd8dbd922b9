import { SkillboxError } from "@skillbox/core";

/**
 * At most `size` runs at once across every queue a worker serves. Each queue's BullMQ worker
 * gets a share of the size (`splitConcurrency`), so the shares alone keep to it — except with
 * more queues than `size`, where each still takes one job and the extra ones wait here. A job
 * waiting for a slot holds no claim, so a process that dies meanwhile loses nothing (BullMQ's
 * stalled check or the sweeper hands the job on). Closing refuses the waiting ones.
 */
export class RunSlots {
  private used = 0;
  private readonly waiting: { resolve(): void; reject(error: Error): void }[] = [];
  private closed = false;

  constructor(readonly size: number) {}

  /** Resolves with the release function of a slot; rejects with `BUSY` once closed. */
  async acquire(): Promise<() => void> {
    if (this.closed) throw closedError();
    if (this.used < this.size) {
      this.used++;
    } else {
      await new Promise<void>((resolve, reject) => this.waiting.push({ resolve, reject }));
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter: `used` stays the same.
      if (next === undefined) this.used--;
      else next.resolve();
    };
  }

  /** Refuses new acquisitions and the ones waiting; the slots held stay until released. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiting.splice(0)) waiter.reject(closedError());
  }
}

function closedError(): SkillboxError {
  return new SkillboxError("BUSY", "The worker is closing and takes no more jobs");
}
