import type { ExecutionRecordStore } from "@skillbox/core";

/**
 * This host's view of the database's clock: leases and deadlines are stamped by the database,
 * and hosts' clocks disagree, so a local timer for a database time goes through the offset
 * measured here (the midpoint of one `now()` round trip). Measured again on every worker
 * heartbeat, which keeps drift small without a query per run.
 */
export class DatabaseClock {
  /** Database time minus local time, in ms. */
  private offsetMs = 0;

  constructor(private readonly store: ExecutionRecordStore) {}

  /** Measures the offset again; keeps the last one when the database does not answer. */
  async measure(): Promise<void> {
    const before = Date.now();
    const databaseNow = await this.store.now();
    const after = Date.now();
    // Whole ms: database times are integers (BIGINT columns), and so is every time made from this.
    this.offsetMs = Math.round(databaseNow - (before + after) / 2);
  }

  /** The database's time now, as estimated locally. */
  now(): number {
    return Date.now() + this.offsetMs;
  }

  /** How long until the database's clock shows `databaseTime`, in local ms (negative when past). */
  msUntil(databaseTime: number): number {
    return databaseTime - this.now();
  }
}
