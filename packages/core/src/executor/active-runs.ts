/** What {@link ActiveRuns} holds: anything with an execution id. */
interface Identified {
  readonly id: string;
}

/**
 * The runs under way in this process, found by execution id for `cancel(id)` and `wait(id)`.
 * Slots of an array with a free list, not a `Map`: every execution enters and leaves, and a Map
 * keyed by fresh id strings cost the executor a tenth of its throughput at 64 in flight. A lookup
 * scans the slots — as many as executions run at once — which only cancels and waits pay.
 */
export class ActiveRuns<Run extends Identified> {
  private readonly slots: (Run | undefined)[] = [];
  private readonly free: number[] = [];

  /** Adds `run`; returns the token that removes it. */
  add(run: Run): number {
    const token = this.free.pop() ?? this.slots.length;
    this.slots[token] = run;
    return token;
  }

  /** Removes the run `add` returned `token` for. */
  remove(token: number): void {
    if (this.slots[token] === undefined) return;
    this.slots[token] = undefined;
    this.free.push(token);
  }

  /** The run of execution `id`, if it runs here. */
  get(id: string): Run | undefined {
    for (const run of this.slots) if (run !== undefined && run.id === id) return run;
    return undefined;
  }

  /** Whether execution `id` runs here. */
  has(id: string): boolean {
    return this.get(id) !== undefined;
  }
}
