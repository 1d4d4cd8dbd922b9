import type { ExecutionRecordStore } from "@skillbox/core";

/** Options of {@link DatabaseClock}. */
export interface DatabaseClockOptions {
  /** This host's clock, in ms (default `Date.now`; tests move one of their own). */
  localNow?: () => number;
}

/**
 * A round trip this much longer than the shortest one seen waited for something besides the
 * database (a pool connection, a busy event loop): its midpoint says little, so it is dropped.
 */
const SLOW_ROUND_TRIP_FACTOR = 3;
/** Round trips up to this long are always taken: on loopback a factor of a 1 ms trip is noise. */
const ALWAYS_TAKEN_ROUND_TRIP_MS = 50;
/** After this many slow samples in a row the link itself got slower: the next one is taken (a minute at the 5 s heartbeat). */
const MOST_DROPPED_IN_A_ROW = 12;

/**
 * This host's view of the database's clock: leases and deadlines are stamped by the database,
 * and hosts' clocks disagree, so a local timer for a database time goes through the offset
 * measured here (the midpoint of one `now()` round trip, so off by at most half of it).
 * Measured again on every worker heartbeat, which keeps drift small without a query per run; a
 * sample whose round trip was much longer than usual (it waited for a pool connection) is
 * dropped rather than let it move the offset by half the wait.
 */
export class DatabaseClock {
  /** Database time minus local time, in ms. */
  private offsetMs = 0;
  private measured = false;
  private shortestRoundTripMs = Number.POSITIVE_INFINITY;
  private droppedInARow = 0;
  private readonly localNow: () => number;

  constructor(
    private readonly store: Pick<ExecutionRecordStore, "now">,
    options: DatabaseClockOptions = {},
  ) {
    this.localNow = options.localNow ?? Date.now;
  }

  /**
   * Measures the offset again; resolves with whether the sample was taken (false: its round trip
   * was too slow to trust, and the last offset stays). Rejects when the database does not answer.
   */
  async measure(): Promise<boolean> {
    const before = this.localNow();
    const databaseNow = await this.store.now();
    const after = this.localNow();
    const roundTripMs = after - before;
    const slow =
      roundTripMs > ALWAYS_TAKEN_ROUND_TRIP_MS &&
      roundTripMs > this.shortestRoundTripMs * SLOW_ROUND_TRIP_FACTOR;
    if (this.measured && slow && this.droppedInARow < MOST_DROPPED_IN_A_ROW) {
      this.droppedInARow++;
      return false;
    }
    // A slow sample taken after many: the new normal is this slow.
    this.shortestRoundTripMs = slow ? roundTripMs : Math.min(this.shortestRoundTripMs, roundTripMs);
    this.droppedInARow = 0;
    this.measured = true;
    // Whole ms: database times are integers (BIGINT columns), and so is every time made from this.
    this.offsetMs = Math.round(databaseNow - (before + after) / 2);
    return true;
  }

  /** The database's time now, as estimated locally. */
  now(): number {
    return this.localNow() + this.offsetMs;
  }

  /** How long until the database's clock shows `databaseTime`, in local ms (negative when past). */
  msUntil(databaseTime: number): number {
    return databaseTime - this.now();
  }
}
