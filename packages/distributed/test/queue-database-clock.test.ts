import { describe, expect, it } from "vitest";
import { DatabaseClock } from "../src/queue/database-clock.js";

/**
 * A database 10 s ahead of a local clock the test moves: each `now()` takes `roundTrips[i]` ms
 * locally, the database answering at the end of it (as after a wait for a pool connection).
 */
function scriptedDatabase(roundTrips: readonly number[]) {
  let local = 1_000_000;
  let calls = 0;
  const offsetMs = 10_000;
  return {
    localNow: () => local,
    store: {
      async now() {
        local += roundTrips[calls++] ?? 2;
        return local + offsetMs;
      },
    },
    offsetMs,
  };
}

describe("DatabaseClock", () => {
  it("measures the database's offset from the midpoint of a round trip", async () => {
    const database = scriptedDatabase([2]);
    const clock = new DatabaseClock(database.store, { localNow: database.localNow });
    await clock.measure();
    expect(clock.now() - database.localNow()).toBe(database.offsetMs + 1);
  });

  it("keeps its offset when a sample's round trip was long (a wait for a pool connection)", async () => {
    const database = scriptedDatabase([2, 8000]);
    const clock = new DatabaseClock(database.store, { localNow: database.localNow });
    await clock.measure();
    const offset = clock.now() - database.localNow();
    expect(await clock.measure()).toBe(false);
    // Taken, the long sample would have put the clock 4 s behind the database.
    expect(clock.now() - database.localNow()).toBe(offset);
  });

  it("takes a slow sample once the round trips stayed slow: the link got slower", async () => {
    const database = scriptedDatabase([2, ...Array.from({ length: 40 }, () => 400)]);
    const clock = new DatabaseClock(database.store, { localNow: database.localNow });
    await clock.measure();
    let taken = false;
    for (let sample = 0; sample < 40 && !taken; sample++) taken = await clock.measure();
    expect(taken).toBe(true);
    expect(clock.now() - database.localNow()).toBe(database.offsetMs + 200);
  });
});
