import { createPostgresRecordStore, type PostgresRecordStore } from "@skillbox/distributed";
import { type RunningPostgres, startPostgresCluster } from "@skillbox/test-helpers/postgres-cluster";
import { queuedRecord } from "@skillbox/test-helpers/record-store-contract";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

async function query<Row extends pg.QueryResultRow>(url: string, sql: string, parameters: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(sql, parameters)).rows;
  } finally {
    await client.end();
  }
}

describe("PostgresListener catch-up", () => {
  let cluster: RunningPostgres;
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it("a subscriber joining while a reconnect is pending does not skip what was written during the outage", async () => {
    const name = `listener_${process.pid}`;
    const url = cluster.createDatabase(name);
    const applicationName = `skillbox-catch-up-${process.pid}`;
    const stores: PostgresRecordStore[] = [];
    const open = async () => {
      const store = createPostgresRecordStore({ url, pool: { max: 2 }, applicationName });
      stores.push(store);
      await store.migrate();
      return store;
    };
    try {
      const listening = await open();
      const writer = await open();
      const statuses: string[] = [];
      const stopFirst = await listening.subscribe((notice) => {
        if (notice.type === "status") statuses.push(`${notice.executionId}:${notice.status}`);
      });
      // A first event, so the listener has a position to catch up from.
      const before = queuedRecord();
      expect((await writer.insertQueued(before)).inserted).toBe(true);
      await expect.poll(() => statuses, { timeout: 15_000 }).toContain(`${before.id}:queued`);
      // The writer's pool keeps its open connection; new connections (the listener's) are refused.
      await query(cluster.url, `ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      const [listener] = await query<{ pid: number }>(
        cluster.url,
        "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
        [`${applicationName}:listener`],
      );
      if (listener === undefined) throw new Error("no listening connection");
      await query(cluster.url, "SELECT pg_terminate_backend($1)", [listener.pid]);
      await expect
        .poll(
          async () =>
            (await query(cluster.url, "SELECT 1 FROM pg_stat_activity WHERE pid = $1", [listener.pid]))
              .length,
        )
        .toBe(0);
      const during = queuedRecord();
      expect((await writer.insertQueued(during)).inserted).toBe(true);
      await query(cluster.url, `ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      // The second subscriber connects the listener itself (the reconnect is still backing off).
      const stopSecond = await listening.subscribe(() => {});
      const after = queuedRecord();
      expect((await writer.insertQueued(after)).inserted).toBe(true);
      await expect.poll(() => statuses, { timeout: 15_000 }).toContain(`${after.id}:queued`);
      expect(statuses).toContain(`${during.id}:queued`);
      await stopSecond();
      await stopFirst();
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });
});
