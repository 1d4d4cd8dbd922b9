import type { PostgresRecordStore } from "@skillbox/distributed";
import { queuedRecord } from "@skillbox/test-helpers/record-store-contract";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { usePostgresCluster } from "./postgres-fixture.js";

const postgres = usePostgresCluster();

/** `count` migrated stores on one fresh database; `close()` ends them all. */
async function storesOnOneDatabase(count: number, applicationName = "skillbox-race") {
  const database = postgres.freshDatabase(applicationName);
  const stores: PostgresRecordStore[] = [];
  for (let index = 0; index < count; index++) stores.push(await database.openStore());
  return { url: database.url, stores, close: database.close };
}

describe("PostgresRecordStore under concurrency", () => {
  it("four stores claiming the same 40 executions at once: each is claimed exactly once", async () => {
    const { stores, close } = await storesOnOneDatabase(4);
    try {
      const [first] = stores;
      if (first === undefined) throw new Error("no store");
      const ids: string[] = [];
      for (let index = 0; index < 40; index++) {
        const inserted = await first.insertQueued(queuedRecord());
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
        const inserted = await first.insertQueued(queuedRecord({ rerunnable: index % 2 === 0 }));
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
      const inserted = await store.insertQueued(queuedRecord());
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
