import { createPostgresRecordStore, type PostgresRecordStore } from "@skillbox/distributed";
import { type RunningPostgres, startPostgresCluster } from "@skillbox/test-helpers/postgres-cluster";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let cluster: RunningPostgres;
let databases = 0;

beforeAll(async () => {
  cluster = await startPostgresCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

/** `count` migrated stores on one fresh database; `close()` ends them all. */
async function storesOnOneDatabase(count: number, applicationName = "skillbox-race") {
  const url = cluster.createDatabase(`race_${process.pid}_${++databases}`);
  const stores: PostgresRecordStore[] = [];
  for (let index = 0; index < count; index++) {
    const store = createPostgresRecordStore({ url, pool: { max: 4 }, applicationName });
    stores.push(store);
    await store.migrate();
  }
  return { url, stores, close: () => Promise.all(stores.map((store) => store.close())) };
}

function record(overrides: { rerunnable?: boolean } = {}) {
  return {
    id: crypto.randomUUID(),
    skillId: "skill-echo-1",
    skillName: "echo",
    skillVersion: "1.0.0",
    contentHash: "sha256:echo",
    queue: "default",
    apiKeyId: "owner-a",
    sessionId: null,
    parentExecutionId: null,
    idempotencyKey: null,
    auditedInputJson: "{}",
    rawInputJson: "{}",
    inputHash: null,
    optionsJson: "{}",
    deadlineAt: null,
    rerunnable: overrides.rerunnable ?? false,
  };
}

describe("PostgresRecordStore under concurrency", () => {
  it("four stores claiming the same 40 executions at once: each is claimed exactly once", async () => {
    const { stores, close } = await storesOnOneDatabase(4);
    try {
      const [first] = stores;
      if (first === undefined) throw new Error("no store");
      const ids: string[] = [];
      for (let index = 0; index < 40; index++) {
        const inserted = await first.insertQueued(record());
        if (inserted.inserted) ids.push(inserted.execution.id);
      }
      const results = await Promise.all(
        stores.flatMap((store, worker) =>
          ids.map(async (id) => ({
            id,
            result: await store.claim({ executionId: id, workerId: `w${worker}`, leaseMs: 60_000 }),
          })),
        ),
      );
      const claimed = results.filter((entry) => entry.result.kind === "claimed").map((entry) => entry.id);
      expect(claimed.sort()).toEqual([...ids].sort());
      expect(await first.count({ status: "running" })).toBe(40);
    } finally {
      await close();
    }
  });

  it("two stores recovering the same expired leases at once recover each once", async () => {
    const { stores, close } = await storesOnOneDatabase(2);
    try {
      const [first, second] = stores;
      if (first === undefined || second === undefined) throw new Error("no store");
      const leases: number[] = [];
      for (let index = 0; index < 12; index++) {
        const inserted = await first.insertQueued(record({ rerunnable: index % 2 === 0 }));
        if (!inserted.inserted) throw new Error("not inserted");
        const result = await first.claim({ executionId: inserted.execution.id, workerId: "w", leaseMs: 1 });
        if (result.kind === "claimed") leases.push(result.claim.leaseExpiresAt);
      }
      const latest = Math.max(...leases);
      await expect.poll(async () => (await first.now()) > latest).toBe(true);
      const [a, b] = await Promise.all([
        first.recoverExpired({ limit: 100 }),
        second.recoverExpired({ limit: 100 }),
      ]);
      const recovered = [...(a ?? []), ...(b ?? [])];
      expect(new Set(recovered.map((entry) => entry.id)).size).toBe(recovered.length);
      // SKIP LOCKED leaves what the other store holds to it; a second sweep finds nothing left.
      const rest = await first.recoverExpired({ limit: 100 });
      expect(recovered.length + rest.length).toBe(12);
      expect(await first.count({ status: "queued" })).toBe(6);
      expect(await first.count({ status: "interrupted" })).toBe(6);
    } finally {
      await close();
    }
  });

  it("the pool outlives its connections being terminated: the next call connects anew", async () => {
    const applicationName = `skillbox-pool-${process.pid}`;
    const { url, stores, close } = await storesOnOneDatabase(1, applicationName);
    try {
      const [store] = stores;
      if (store === undefined) throw new Error("no store");
      const inserted = await store.insertQueued(record());
      if (!inserted.inserted) throw new Error("not inserted");
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        // Pids first, then terminate: in one WHERE the planner may call pg_terminate_backend first, on any row.
        const pool = await admin.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
          [applicationName],
        );
        expect(pool.rows.length).toBeGreaterThan(0);
        for (const { pid } of pool.rows) await admin.query("SELECT pg_terminate_backend($1)", [pid]);
        // An idle client whose connection ended is dropped; a call may meet one before it is.
        await expect
          .poll(async () => (await store.get(inserted.execution.id).catch(() => undefined))?.status, {
            timeout: 15_000,
          })
          .toBe("queued");
      } finally {
        await admin.end();
      }
    } finally {
      await close();
    }
  });
});
