import { hostname } from "node:os";
import { createDistributedHost, createPostgresRecordStore } from "@skillbox/distributed";
import { type RunningRedis, startRedisServer } from "@skillbox/test-helpers/redis-server";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { usePostgresCluster } from "./postgres-fixture.js";

const postgres = usePostgresCluster();
let redis: RunningRedis | undefined;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  await redis?.stop();
});

function quietLogger() {
  const nothing = () => {};
  return { debug: nothing, info: nothing, warn: nothing, error: nothing };
}

/**
 * A connection of the test's own that holds `skillbox_workers` locked until `release()`: every
 * statement of a store reading it waits, holding its pool connection, so the pool's size shows.
 */
async function lockWorkersTable(url: string): Promise<{
  waiting(applicationName: string): Promise<number>;
  release(): Promise<void>;
}> {
  const locker = new pg.Client({ connectionString: url });
  // Another connection counts: inside the locker's transaction pg_stat_activity is one snapshot.
  const observer = new pg.Client({ connectionString: url });
  await Promise.all([locker.connect(), observer.connect()]);
  let released: Promise<void> | undefined;
  const release = () => {
    released ??= (async () => {
      await locker.query("ROLLBACK");
      await Promise.all([locker.end(), observer.end()]);
    })();
    return released;
  };
  closers.push(release);
  await locker.query("BEGIN");
  await locker.query("LOCK TABLE skillbox_workers IN ACCESS EXCLUSIVE MODE");
  return {
    async waiting(applicationName) {
      const result = await observer.query<{ count: number }>(
        `SELECT count(*)::int AS count FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = $1 AND wait_event_type = 'Lock'`,
        [applicationName],
      );
      return result.rows[0]?.count ?? 0;
    },
    release,
  };
}

describe("the record store's connection pool", () => {
  it("is sized from a worker host's concurrency, so its runs do not wait for connections", async () => {
    const database = postgres.freshDatabase();
    closers.push(() => database.close());
    const host = await createDistributedHost({
      database: database.url,
      queue: redis!.url,
      role: "worker",
      prefix: "pool-size",
      sweeper: false,
      queueWorker: { concurrency: 24 },
      logger: quietLogger(),
    });
    closers.push(() => host.close({ graceMs: 0 }));
    const lock = await lockWorkersTable(database.url);
    // More reads at once than the pool has connections: each takes one and waits on the lock.
    const reads = Array.from({ length: 60 }, () => host.store.listWorkers().catch(() => undefined));
    try {
      await expect
        .poll(() => lock.waiting(`skillbox ${hostname()}`), { timeout: 8000, interval: 50 })
        .toBe(24 + 6);
    } finally {
      await lock.release();
      await Promise.all(reads);
    }
  });

  it("names a pool wait that timed out as an exhausted pool, not as an unreachable server", async () => {
    const database = postgres.freshDatabase();
    closers.push(() => database.close());
    const store = createPostgresRecordStore({
      url: database.url,
      pool: { max: 1 },
      applicationName: "pool-of-one",
    });
    closers.push(() => store.close());
    await store.migrate();
    const lock = await lockWorkersTable(database.url);
    const blocked = store.listWorkers().catch(() => undefined);
    await expect.poll(() => lock.waiting("pool-of-one"), { timeout: 8000, interval: 50 }).toBe(1);
    // The pool's one connection is taken: the next statement waits for it until the pool gives up.
    const error = await store.now().then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toMatchObject({ code: "STORE_UNAVAILABLE" });
    expect((error as Error).message).toMatch(/pool.*exhausted/i);
    expect((error as Error).message).toMatch(/pool\.max/);
    expect((error as Error).message).not.toMatch(/unreachable/i);
    await lock.release();
    await blocked;
  }, 30_000);
});
