import type { ExecutionRecordStore, RecordNotice, SkillExecution } from "@skillbox/core";
import { createPostgresRecordStore, type PostgresRecordStore, RecordFollower } from "@skillbox/distributed";
import { type RunningPostgres, startPostgresCluster } from "@skillbox/test-helpers/postgres-cluster";
import { queuedRecord } from "@skillbox/test-helpers/record-store-contract";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * A real PostgreSQL store whose reads are counted (and held while `hold` is set), and whose
 * notice listener the test can also call, to send a burst of notices at once.
 */
function observedStore(store: PostgresRecordStore) {
  const reads: string[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  let hold: Promise<void> | undefined;
  const listeners: ((notice: RecordNotice) => void)[] = [];
  const observed = new Proxy(store, {
    get(target, property) {
      if (property === "get") {
        return async (id: string): Promise<SkillExecution | undefined> => {
          reads.push(id);
          inFlight++;
          mostInFlight = Math.max(mostInFlight, inFlight);
          try {
            if (hold !== undefined) await hold;
            return await target.get(id);
          } finally {
            inFlight--;
          }
        };
      }
      if (property === "subscribe") {
        return (listener: (notice: RecordNotice) => void) => {
          listeners.push(listener);
          return target.subscribe(listener);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as ExecutionRecordStore;
  return {
    observed,
    reads,
    mostInFlight: () => mostInFlight,
    notify: (notice: RecordNotice) => {
      for (const listener of listeners) listener(notice);
    },
    holdReads(): () => void {
      let release = () => {};
      hold = new Promise((resolve) => {
        release = () => {
          hold = undefined;
          resolve();
        };
      });
      return release;
    },
  };
}

describe("RecordFollower", () => {
  let cluster: RunningPostgres;
  let databases = 0;
  const opened: { store: PostgresRecordStore; follower: RecordFollower }[] = [];

  beforeAll(async () => {
    cluster = await startPostgresCluster();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  afterEach(async () => {
    for (const { follower, store } of opened.splice(0)) {
      await follower.close(new Error("test over"));
      await store.close();
    }
  });

  async function openFollower() {
    const url = cluster.createDatabase(`follower_${process.pid}_${++databases}`);
    const store = createPostgresRecordStore({
      url,
      pool: { max: 4 },
      applicationName: "skillbox-follower-test",
    });
    await store.migrate();
    const observation = observedStore(store);
    // A long poll interval: these tests drive what is read through notices alone.
    const follower = new RecordFollower({
      store: observation.observed,
      logger: silent,
      pollIntervalMs: 3_600_000,
    });
    await follower.start();
    opened.push({ store, follower });
    return { store, follower, ...observation };
  }

  it("a watcher of one owner's executions makes the host read no other owner's records", async () => {
    const { store, follower, reads } = await openFollower();
    const watching = follower.hub.subscribe({ owner: "alice" });
    const bob = queuedRecord({ apiKeyId: "bob" });
    const alice = queuedRecord({ apiKeyId: "alice" });
    expect((await store.insertQueued(bob)).inserted).toBe(true);
    expect((await store.insertQueued(alice)).inserted).toBe(true);
    // Notices arrive in commit order: bob's was handled before alice's event could be published.
    const event = await watching.next();
    expect(event.value).toMatchObject({ type: "status", executionId: alice.id, status: "queued" });
    expect(reads).not.toContain(bob.id);
    await watching.return();
  });

  it("reads an execution once for a burst of its notices, and caps the reads in flight", async () => {
    const { store, follower, reads, notify, holdReads, mostInFlight } = await openFollower();
    const watching = follower.hub.subscribe({});
    const records = Array.from({ length: 20 }, () => queuedRecord({ apiKeyId: "alice" }));
    const release = holdReads();
    for (const record of records) expect((await store.insertQueued(record)).inserted).toBe(true);
    const first = records[0] as (typeof records)[number];
    for (let index = 0; index < 5; index++) {
      notify({ type: "status", executionId: first.id, apiKeyId: "alice", status: "queued" });
    }
    await expect.poll(() => reads.length).toBeGreaterThan(0);
    expect(mostInFlight()).toBeLessThanOrEqual(8);
    release();
    const seen = new Set<string>();
    while (seen.size < records.length) {
      const event = await watching.next();
      if (event.done !== true) seen.add(event.value.executionId);
    }
    expect(mostInFlight()).toBeLessThanOrEqual(8);
    // Its own notice, plus five more while it was read: at most one more read, not five.
    expect(reads.filter((id) => id === first.id).length).toBeLessThanOrEqual(2);
    await watching.return();
  });

  it("forgets the statuses it remembered once the last watcher left", async () => {
    const { store, follower } = await openFollower();
    const watching = follower.hub.subscribe({});
    const record = queuedRecord();
    expect((await store.insertQueued(record)).inserted).toBe(true);
    expect((await watching.next()).value).toMatchObject({ executionId: record.id, status: "queued" });
    await watching.return();
    const internals = follower as unknown as { lastStatus: Map<string, string>; poll(): unknown };
    expect(internals.lastStatus.size).toBe(1);
    await internals.poll();
    expect(internals.lastStatus.size).toBe(0);
  });
});
