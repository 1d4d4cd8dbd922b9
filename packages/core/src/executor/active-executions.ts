/**
 * The executions an executor is running, counted rather than kept: close() only needs to know
 * how many there are and when the last one ended, and a counter costs each execution neither a
 * set entry nor a closure of its own.
 */
export class ActiveExecutions {
  private count = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly settled = () => {
    this.count--;
    if (this.count > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  /** How many executions run. */
  get size(): number {
    return this.count;
  }

  /** Counts `execution` until it settles. */
  track(execution: Promise<unknown>): void {
    this.count++;
    execution.then(this.settled, this.settled);
  }

  /** Resolves once none runs — those that start meanwhile (nested calls) included. */
  drained(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
