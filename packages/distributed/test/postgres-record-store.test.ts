import { inspect } from "node:util";
import { createPostgresRecordStore, POSTGRES_SCHEMA_VERSION } from "@skillbox/distributed";
import { freeLoopbackPort } from "@skillbox/test-helpers/free-loopback-port";
import { describeRecordStoreContract, queuedRecord } from "@skillbox/test-helpers/record-store-contract";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { usePostgresCluster } from "./postgres-fixture.js";

const { freshDatabase } = usePostgresCluster();

/** Runs one statement on `url` with a client of its own. */
async function query<Row extends pg.QueryResultRow>(
  url: string,
  sql: string,
  parameters: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(sql, parameters)).rows;
  } finally {
    await client.end();
  }
}

describeRecordStoreContract("PostgresRecordStore", async () => {
  const database = freshDatabase();
  const store = await database.openStore();
  return { store, openAnother: () => database.openStore(), cleanup: database.close };
});

describe("PostgresRecordStore on PostgreSQL", () => {
  it("four stores migrating a fresh database at once apply each version once", async () => {
    const database = freshDatabase();
    try {
      const stores = await Promise.all([1, 2, 3, 4].map(() => database.openStore(false)));
      await Promise.all(stores.map((store) => store.migrate()));
      const versions = await query<{ version: number }>(
        database.url,
        "SELECT version FROM skillbox_migrations ORDER BY version",
      );
      expect(versions.map((row) => row.version)).toEqual(
        Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, index) => index + 1),
      );
      await stores[0]?.migrate();
      expect(await query(database.url, "SELECT version FROM skillbox_migrations")).toHaveLength(
        POSTGRES_SCHEMA_VERSION,
      );
      expect(await stores[3]?.count()).toBe(0);
      const keys = await Promise.all(stores.map((store) => store.inputHashKey()));
      for (const key of keys) expect(key.equals(keys[0] as Buffer)).toBe(true);
    } finally {
      await database.close();
    }
  });

  it("LISTEN survives its connection being terminated: the listener reconnects and notices still arrive", async () => {
    const applicationName = `skillbox-listen-${process.pid}`;
    const database = freshDatabase(applicationName);
    try {
      const store = await database.openStore();
      const writer = await database.openStore();
      const statuses: string[] = [];
      const stop = await store.subscribe((notice) => {
        if (notice.type === "status") statuses.push(`${notice.executionId}:${notice.status}`);
      });
      const listeners = () =>
        query<{ pid: number }>(database.url, "SELECT pid FROM pg_stat_activity WHERE application_name = $1", [
          `${applicationName}:listener`,
        ]);
      const [first] = await listeners();
      if (first === undefined) throw new Error("no listening connection");
      const terminated = await query<{ done: boolean }>(
        database.url,
        "SELECT pg_terminate_backend($1) AS done",
        [first.pid],
      );
      expect(terminated[0]?.done).toBe(true);
      // Written while the listener may still be away: read back from the events once it returns.
      const submitted = await writer.insertQueued(queuedRecord());
      if (!submitted.inserted) throw new Error("not inserted");
      const id = submitted.execution.id;
      await expect
        .poll(async () => (await listeners()).map((row) => row.pid), { timeout: 15_000 })
        .not.toContain(first.pid);
      await expect.poll(async () => (await listeners()).length, { timeout: 15_000 }).toBe(1);
      await expect.poll(() => statuses, { timeout: 15_000 }).toContain(`${id}:queued`);
      const claimed = await writer.claim({ executionId: id, workerId: "w", leaseMs: 60_000 });
      if (claimed.kind !== "claimed") throw new Error(`not claimed: ${claimed.kind}`);
      expect(
        await writer.finish(claimed.claim, {
          status: "success",
          outputJson: "1",
          error: null,
          attempts: 1,
          durationMs: 1,
          traceId: null,
          spanId: null,
        }),
      ).toBe(true);
      await expect.poll(() => statuses, { timeout: 15_000 }).toContain(`${id}:success`);
      await stop();
      await expect.poll(async () => (await listeners()).length, { timeout: 15_000 }).toBe(0);
    } finally {
      await database.close();
    }
  });

  it("a closed port answers STORE_UNAVAILABLE naming host:port, never the password", async () => {
    const port = await freeLoopbackPort();
    const store = createPostgresRecordStore({
      url: `postgres://skillbox:pw-s3cret-9@127.0.0.1:${port}/records`,
    });
    try {
      for (const attempt of [
        () => store.migrate(),
        () => store.get("x"),
        () => store.subscribe(() => undefined),
      ]) {
        const error = await attempt().then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error).toMatchObject({ code: "STORE_UNAVAILABLE" });
        expect((error as Error).message).toContain(`127.0.0.1:${port}`);
        expect((error as Error).message).not.toContain("pw-s3cret-9");
        expect(JSON.stringify(error)).not.toContain("pw-s3cret-9");
        // What a logger prints of it, causes and all.
        expect(inspect(error, { depth: 10 })).not.toContain("pw-s3cret-9");
      }
    } finally {
      await store.close();
    }
  });

  it("refuses a URL that is not postgres:// (CONFIG_INVALID)", () => {
    expect(() => createPostgresRecordStore({ url: "mysql://127.0.0.1/x" })).toThrow(
      expect.objectContaining({ code: "CONFIG_INVALID" }),
    );
  });
});
