import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqliteRecordStore, type ExecutionRecordStore } from "@skillbox/core";
import {
  connectQueueRedis,
  createDistributedHost,
  createPostgresRecordStore,
  RecordSweeper,
} from "@skillbox/distributed";
import { type RunningPostgres, startPostgresCluster } from "@skillbox/test-helpers/postgres-cluster";
import { type RunningRedis, startRedisServer } from "@skillbox/test-helpers/redis-server";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

let postgres: RunningPostgres;
let redis: RunningRedis;
let databases = 0;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  [postgres, redis] = await Promise.all([startPostgresCluster(), startRedisServer()]);
}, 60_000);
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  await Promise.all([postgres?.stop(), redis?.stop()]);
});

function heartbeat(workerId: string) {
  return {
    workerId,
    host: "test",
    pid: 1,
    queues: ["default"],
    skills: [],
    concurrency: 1,
    running: 0,
    startedAt: 0,
  };
}

describe("DistributedHost.startWorker", () => {
  it("can be called again after a start that failed", async () => {
    const database = postgres.createDatabase(`retry_${process.pid}_${++databases}`);
    const host = await createDistributedHost({
      database,
      queue: redis.url,
      role: "worker",
      prefix: "start-retry",
      sweeper: false,
      queueWorker: { workerId: "worker-retry" },
      logger: quiet,
    });
    closers.push(() => host.close({ graceMs: 0 }));
    const admin = connectQueueRedis(redis.url, { role: "worker" });
    closers.push(() => admin.quit());
    // The worker checks the policy when it starts: an evicting Redis makes that start fail.
    await admin.config("SET", "maxmemory-policy", "allkeys-lru");
    try {
      await expect(host.startWorker()).rejects.toMatchObject({ code: "QUEUE_EVICTING" });
    } finally {
      await admin.config("SET", "maxmemory-policy", "noeviction");
    }
    expect(host.worker).toBeUndefined();
    await host.startWorker();
    const workers = await host.store.listWorkers();
    expect(workers.map((worker) => worker.workerId)).toEqual(["worker-retry"]);
  });
});

describe("RecordSweeper forgets workers that stopped heartbeating", () => {
  it("deletes PostgreSQL rows whose heartbeat is older than a day", async () => {
    const url = postgres.createDatabase(`forget_${process.pid}_${++databases}`);
    const store = createPostgresRecordStore({ url, pool: { max: 2 } });
    closers.push(() => store.close());
    await store.migrate();
    await store.heartbeatWorker(heartbeat("killed"));
    await store.heartbeatWorker(heartbeat("alive"));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(
        "UPDATE skillbox_workers SET last_heartbeat_at = last_heartbeat_at - $1::bigint WHERE worker_id = 'killed'",
        [2 * 24 * 60 * 60 * 1000],
      );
    } finally {
      await client.end();
    }
    const sweeper = new RecordSweeper({ store, queue: { add: async () => {} }, logger: quiet });
    closers.push(() => sweeper.close());
    expect(await sweeper.sweep()).toMatchObject({ forgottenWorkers: 1, failures: 0 });
    expect((await store.listWorkers()).map((worker) => worker.workerId)).toEqual(["alive"]);
  });

  it("deletes SQLite rows whose heartbeat is older than asked", async () => {
    const folder = mkdtempSync(join(tmpdir(), "skillbox-forget-"));
    closers.push(async () => rmSync(folder, { recursive: true, force: true }));
    const store: ExecutionRecordStore = createSqliteRecordStore({ path: join(folder, "record.db") });
    closers.push(() => store.close());
    await store.heartbeatWorker(heartbeat("gone"));
    expect(await store.removeStaleWorkers({ olderThanMs: 60_000 })).toBe(0);
    // Older than 0 ms: true as soon as the database clock moved past the heartbeat.
    await expect.poll(() => store.removeStaleWorkers({ olderThanMs: 0 })).toBe(1);
    expect(await store.listWorkers()).toEqual([]);
  });
});
