import { existsSync } from "node:fs";
import { join } from "node:path";
import { createPostgresRecordStore } from "@skillbox/distributed";
import { type CliProject, createCliProject } from "@skillbox/test-helpers/cli-process";
import { type RunningPostgres, startPostgresCluster } from "@skillbox/test-helpers/postgres-cluster";
import { type RunningRedis, startRedisServer } from "@skillbox/test-helpers/redis-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

interface Report {
  ok: boolean;
  problems: string[];
  database: {
    reachable: boolean;
    schemaVersion?: number;
    latestSchemaVersion?: number;
    notificationQueueUsage?: number;
  };
}

let postgres: RunningPostgres;
let redis: RunningRedis;
let project: CliProject;

beforeAll(async () => {
  [postgres, redis] = await Promise.all([startPostgresCluster(), startRedisServer()]);
  project = createCliProject();
}, 60_000);
afterAll(async () => {
  await project?.cleanup();
  await Promise.all([postgres?.stop(), redis?.stop()]);
});

async function doctor(database: string): Promise<{ code: number | null; report: Report }> {
  const result = await project.run(["doctor", "--json"], {
    env: { SKILLBOX_DB: database, SKILLBOX_QUEUE: redis.url },
  });
  return { code: result.code, report: JSON.parse(result.stdout) as Report };
}

describe("skillbox doctor only looks", () => {
  it("reports a PostgreSQL database that needs migration and leaves it unmigrated", async () => {
    const url = postgres.createDatabase("doctor_unmigrated");
    const { code, report } = await doctor(url);
    expect(code).toBe(1);
    expect(report.database).toMatchObject({ reachable: true, schemaVersion: 0 });
    expect(report.problems.join("\n")).toMatch(/needs migration: its schema is at version 0/);
    const store = createPostgresRecordStore({ url });
    try {
      expect((await store.schemaVersion()).applied).toBe(0);
    } finally {
      await store.close();
    }
  });

  it("shows the schema version and the NOTIFY queue usage of a migrated database", async () => {
    const url = postgres.createDatabase("doctor_migrated");
    const store = createPostgresRecordStore({ url });
    try {
      await store.migrate();
    } finally {
      await store.close();
    }
    const { code, report } = await doctor(url);
    expect(report.problems).toEqual([]);
    expect(code).toBe(0);
    expect(report.database.schemaVersion).toBeGreaterThan(0);
    expect(report.database.schemaVersion).toBe(report.database.latestSchemaVersion);
    expect(report.database.notificationQueueUsage).toBe(0);
  });

  it("does not create a SQLite file that is not there", async () => {
    const missing = join(project.tree.root, "nowhere", "skillbox.db");
    const { code, report } = await doctor(missing);
    expect(code).toBe(1);
    expect(report.database.reachable).toBe(false);
    expect(report.problems.join("\n")).toMatch(/no Skillbox database at/);
    expect(existsSync(missing)).toBe(false);
  });
});
