import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { createSkillHost, openDatabase, type SkillHost } from "@skillbox/core";
import { createTemporaryDirectory } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import { UNDO_DURABLE_EXECUTIONS } from "./undo-durable-executions.js";

const directories: string[] = [];
const hosts: SkillHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** A UUIDv7-shaped id minted now (recovery finds a runner's rows by the time in their ids). */
function executionId(serial: number): string {
  const hex = Date.now().toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-${String(serial).padStart(12, "0")}`;
}

/** The pid of a process that has exited (a real one, so nothing else holds it for a while). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  });
  return Number(child.stdout);
}

/**
 * A database file as the version before runner leases left it: schema version 1, runners
 * without a lease, executions without an input hash, with the rows given.
 */
function legacyDatabase(
  fill: (insert: {
    runner(values: { runnerId: string; pid: number; host: string; startedAt: number }): number;
    execution(values: { id: string; runner: number; status: string; idempotencyKey?: string }): void;
  }) => void,
): string {
  const directory = createTemporaryDirectory();
  directories.push(directory);
  const path = join(directory, "skillbox.db");
  const database = openDatabase({ path });
  database.exec(`
    ${UNDO_DURABLE_EXECUTIONS}
    ALTER TABLE skills DROP COLUMN code;
    ALTER TABLE skills DROP COLUMN examples;
    DROP TABLE skillbox_keys;
    DROP INDEX runners_open;
    ALTER TABLE skill_executions DROP COLUMN input_hash;
    ALTER TABLE skillbox_runners DROP COLUMN lease_expires_at;
    PRAGMA user_version = 1;
  `);
  const insertRunner = database.prepare(
    "INSERT INTO skillbox_runners (runner_id, pid, host, started_at) VALUES (?, ?, ?, ?)",
  );
  const insertExecution = database.prepare(
    `INSERT INTO skill_executions (id, skill_id, skill_name, skill_version, api_key_id, idempotency_key,
       input, output, status, attempts, created_at, finished_at, runner)
     VALUES (?, 'skill-1', 'charge', '1.0.0', 'public', ?, '{"amount":10}', ?, ?, 1, ?, ?, ?)`,
  );
  fill({
    runner: ({ runnerId, pid, host, startedAt }) =>
      Number(insertRunner.run(runnerId, pid, host, startedAt).lastInsertRowid),
    execution: ({ id, runner, status, idempotencyKey }) => {
      const finished = status !== "running";
      insertExecution.run(
        id,
        idempotencyKey ?? null,
        finished ? '"charged"' : null,
        status,
        Date.now() - 1_000,
        finished ? Date.now() : null,
        runner,
      );
    },
  });
  database.close();
  return path;
}

describe("migrate", () => {
  it("gives runners of a database from before leases one default lease and keeps same-host recovery", async () => {
    const startedAt = Date.now() - 60_000;
    const [elsewhereId, hereId] = [executionId(1), executionId(2)];
    const path = legacyDatabase((insert) => {
      const elsewhere = insert.runner({
        runnerId: "old-elsewhere",
        pid: 1,
        host: "old-container",
        startedAt,
      });
      const here = insert.runner({ runnerId: "old-here", pid: deadPid(), host: hostname(), startedAt });
      insert.execution({ id: elsewhereId, runner: elsewhere, status: "running" });
      insert.execution({ id: hereId, runner: here, status: "running" });
    });

    const before = Date.now();
    const host = createSkillHost({
      database: path,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    hosts.push(host);

    expect(host.database.pragma("user_version", { simple: true })).toBeGreaterThanOrEqual(2);
    // This host's runner with a dead pid is recovered at once, as before leases.
    expect((await host.executor.getExecution(hereId))?.status).toBe("interrupted");
    // The other host's runner cannot be checked: it gets one default lease from the migration.
    expect((await host.executor.getExecution(elsewhereId))?.status).toBe("running");
    const lease = host.database
      .prepare<[], number>("SELECT lease_expires_at FROM skillbox_runners WHERE runner_id = 'old-elsewhere'")
      .pluck()
      .get()!;
    expect(lease).toBeGreaterThanOrEqual(before + 30_000 - 1_000);
    expect(lease).toBeLessThanOrEqual(Date.now() + 30_000 + 1_000);
  });

  it("serves a repeat of an idempotency key stored before input hashes whatever its input", async () => {
    const id = executionId(3);
    const path = legacyDatabase((insert) => {
      const runner = insert.runner({ runnerId: "old", pid: 1, host: "old-container", startedAt: Date.now() });
      insert.execution({
        id,
        runner,
        status: "success",
        idempotencyKey: "order-1",
      });
    });
    const host = createSkillHost({
      database: path,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    hosts.push(host);
    host.registry.register({ name: "charge", version: "1.0.0", handler: "charge", apiKeyId: "public" });
    let calls = 0;
    host.executor.registerHandler("charge", () => ++calls);

    const repeat = await host.executor.execute("charge", { amount: 99 }, { idempotencyKey: "order-1" });
    expect(repeat.id).toBe(id);
    expect(repeat.output).toBe("charged");
    expect(calls).toBe(0);
  });
});

describe("migrate to keyed input hashes", () => {
  it("gives a database one random key and drops the unkeyed hashes written before it", async () => {
    const directory = createTemporaryDirectory();
    directories.push(directory);
    const path = join(directory, "skillbox.db");
    const id = executionId(4);
    const database = openDatabase({ path });
    // The file as schema version 2 left it: no key, an unkeyed sha256 with an idempotent row.
    database.exec(`
      ${UNDO_DURABLE_EXECUTIONS}
      ALTER TABLE skills DROP COLUMN code;
      ALTER TABLE skills DROP COLUMN examples;
      DROP TABLE skillbox_keys;
      PRAGMA user_version = 2;
    `);
    const runner = Number(
      database
        .prepare(
          "INSERT INTO skillbox_runners (runner_id, pid, host, started_at) VALUES ('old', 1, 'old', ?)",
        )
        .run(Date.now()).lastInsertRowid,
    );
    database
      .prepare(
        `INSERT INTO skill_executions (id, skill_id, skill_name, skill_version, api_key_id, idempotency_key,
           input, output, status, attempts, created_at, finished_at, runner, input_hash)
         VALUES (?, 'skill-1', 'charge', '1.0.0', 'public', 'order-2', '{"amount":10}', '"charged"', 'success',
           1, ?, ?, ?, ?)`,
      )
      .run(
        id,
        Date.now() - 1_000,
        Date.now(),
        runner,
        createHash("sha256").update('{"amount":10}').digest("hex"),
      );
    database.close();

    const host = createSkillHost({
      database: path,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    hosts.push(host);
    expect(host.database.pragma("user_version", { simple: true })).toBeGreaterThanOrEqual(3);
    const key = host.database
      .prepare<[], Buffer>("SELECT key FROM skillbox_keys WHERE name = 'input_hash'")
      .pluck()
      .get();
    expect(key?.length).toBe(32);
    expect(
      host.database
        .prepare<[string], unknown>("SELECT input_hash FROM skill_executions WHERE id = ?")
        .pluck()
        .get(id),
    ).toBeNull();
    // A row without a hash matches any input, as rows from before hashes do.
    host.registry.register({ name: "charge", version: "1.0.0", handler: "charge", apiKeyId: "public" });
    host.executor.registerHandler("charge", () => "charged again");
    const repeat = await host.executor.execute("charge", { amount: 10 }, { idempotencyKey: "order-2" });
    expect(repeat.id).toBe(id);
    expect(repeat.output).toBe("charged");
  });
});
