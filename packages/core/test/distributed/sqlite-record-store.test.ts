import { type ChildProcessByStdio, spawn, spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  createSkillHost,
  createSqliteRecordStore,
  openDatabase,
  type QueuedExecutionRecord,
  type SkillHost,
  type SqliteRecordStore,
} from "@skillbox/core";
import { createExecutionId } from "@skillbox/core/internal";
import { describeRecordStoreContract } from "@skillbox/test-helpers/record-store-contract";
import { createTemporaryDirectory } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import { UNDO_SHARED_RECORD } from "../database/undo-shared-record.js";

const here = dirname(fileURLToPath(import.meta.url));
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const directories: string[] = [];
const stores: SqliteRecordStore[] = [];
const hosts: SkillHost[] = [];
const children: ChildProcessByStdio<Writable, Readable, Readable>[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill();
  for (const host of hosts.splice(0)) await host.close();
  for (const store of stores.splice(0)) await store.close();
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function databasePath(): string {
  const directory = createTemporaryDirectory();
  directories.push(directory);
  return join(directory, "skillbox.db");
}

function openStore(path: string): SqliteRecordStore {
  const store = createSqliteRecordStore({ path, pollIntervalMs: 20 });
  stores.push(store);
  return store;
}

describeRecordStoreContract("SqliteRecordStore", async () => {
  const directory = createTemporaryDirectory();
  const path = join(directory, "records.db");
  const store = createSqliteRecordStore({ path });
  const others: SqliteRecordStore[] = [];
  return {
    store,
    async openAnother() {
      const another = createSqliteRecordStore({ path });
      others.push(another);
      return another;
    },
    async cleanup() {
      for (const opened of [store, ...others]) await opened.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
});

function record(overrides: Partial<QueuedExecutionRecord> = {}): QueuedExecutionRecord {
  return {
    id: createExecutionId(),
    skillId: "skill-echo",
    skillName: "echo",
    skillVersion: "1.0.0",
    contentHash: "sha256:echo",
    queue: "default",
    apiKeyId: "public",
    sessionId: null,
    parentExecutionId: null,
    idempotencyKey: null,
    auditedInputJson: JSON.stringify({ text: "hi" }),
    rawInputJson: JSON.stringify({ text: "hi" }),
    inputHash: null,
    optionsJson: "{}",
    totalTimeoutMs: null,
    rerunnable: false,
    ...overrides,
  };
}

async function claimed(store: SqliteRecordStore, id: string) {
  const result = await store.claim({ executionId: id, workerId: "worker-1", leaseMs: 600_000 });
  if (result.kind !== "claimed") throw new Error(`expected a claim of ${id}, got ${result.kind}`);
  return result.claim;
}

const success = {
  status: "success" as const,
  outputJson: JSON.stringify({ from: "worker" }),
  error: null,
  attempts: 1,
  durationMs: 1,
  traceId: null,
  spanId: null,
};

/**
 * A runner that died (its lease lapsed long ago, its process is gone) with a running row, what
 * the one-host recovery is for; returns the row's id.
 */
function plantOrphan(path: string, runnerId: string): string {
  const database = openDatabase({ path });
  const now = Date.now();
  const runner = Number(
    database
      .prepare(
        "INSERT INTO skillbox_runners (runner_id, pid, host, started_at, lease_expires_at) VALUES (?, ?, ?, ?, ?)",
      )
      .run(runnerId, deadPid(), "gone-host", now - 10_000, now - 5_000).lastInsertRowid,
  );
  const id = createExecutionId();
  database
    .prepare(
      `INSERT INTO skill_executions (id, skill_id, skill_name, skill_version, api_key_id, status, attempts,
         created_at, runner)
       VALUES (?, 'skill-echo', 'echo', '1.0.0', 'public', 'running', 1, ?, ?)`,
    )
    .run(id, now, runner);
  database.close();
  return id;
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  });
  return Number(child.stdout);
}

describe("createSqliteRecordStore", () => {
  it("migration 7 brings a version-6 file to the shared record and keeps its rows and its one-host queue", async () => {
    const path = databasePath();
    const before = createSkillHost({ database: path, logger: quiet, queue: false });
    before.registry.register({ name: "echo", version: "1.0.0", handler: "echo", apiKeyId: "public" });
    before.executor.registerHandler("echo", (input) => input);
    const done = await before.executor.execute("echo", { a: 1 });
    const waiting = await before.executor.submit("echo", { b: 2 });
    await before.close();
    const database = openDatabase({ path });
    database.exec(`${UNDO_SHARED_RECORD}\nPRAGMA user_version = 6;`);
    database.close();

    const store = openStore(path);
    const migrated = openDatabase({ path });
    expect(migrated.pragma("user_version", { simple: true })).toBe(7);
    migrated.close();
    expect(await store.get(done.id)).toMatchObject({ status: "success", output: { a: 1 } });
    expect(await store.get(waiting)).toMatchObject({ status: "queued", input: { b: 2 } });
    // The one-host job stays its dispatcher's: no worker claims it, no sweeper enqueues it.
    expect(await store.claim({ executionId: waiting, workerId: "worker-1", leaseMs: 1000 })).toEqual({
      kind: "unavailable",
      status: "queued",
    });
    expect(await store.staleQueued({ olderThanMs: 0, limit: 10 })).toEqual([]);
    const inserted = record();
    expect((await store.insertQueued(inserted)).inserted).toBe(true);
    expect(await store.finish(await claimed(store, inserted.id), success)).toBe(true);

    const after = createSkillHost({ database: path, logger: quiet });
    hosts.push(after);
    after.executor.registerHandler("echo", (input) => input);
    expect(await after.executor.wait(waiting, { timeoutMs: 30_000 })).toMatchObject({
      status: "success",
      output: { b: 2 },
    });
  });

  it("a one-host executor on the same file neither recovers nor dispatches the shared record's executions", async () => {
    const path = databasePath();
    const store = openStore(path);
    const running = record({ idempotencyKey: "order-1" });
    await store.insertQueued(running);
    const claim = await claimed(store, running.id);
    const queued = record();
    await store.insertQueued(queued);
    const orphan = plantOrphan(path, "dead-runner-1");

    const host = createSkillHost({
      database: path,
      logger: quiet,
      runnerLeaseMs: 60,
      queue: { pollIntervalMs: 10 },
    });
    hosts.push(host);
    host.registry.register({ name: "echo", version: "1.0.0", handler: "echo", apiKeyId: "public" });
    host.executor.registerHandler("echo", () => ({ from: "one-host" }));
    // Its recovery ran over the file: the dead runner's row ended.
    expect(await host.executor.getExecution(orphan)).toMatchObject({ status: "interrupted" });
    // Its dispatcher ran: a job it queued itself (a key makes the submit queue) ran.
    const local = await host.executor.submit("echo", {}, { idempotencyKey: "local-1" });
    expect(await host.executor.wait(local, { timeoutMs: 30_000 })).toMatchObject({ status: "success" });
    // A repeat of the claimed execution's key waits on it, asking the recovery whether its runner
    // died at every poll: it must not, and the worker's outcome is the answer.
    const repeat = host.executor.execute("echo", { text: "hi" }, { idempotencyKey: "order-1" });
    await expect.poll(async () => (await store.renew(claim, 600_000)).held).toBe(true);
    // Its lease timer sweeps the file while the claim is held: another dead runner's row ends.
    const later = plantOrphan(path, "dead-runner-2");
    await expect.poll(async () => (await host.executor.getExecution(later))?.status).toBe("interrupted");
    expect(await store.get(running.id)).toMatchObject({ status: "running" });
    expect(await store.get(queued.id)).toMatchObject({ status: "queued" });
    expect(await store.finish(claim, success)).toBe(true);
    expect(await repeat).toMatchObject({ id: running.id, status: "success", output: { from: "worker" } });
    expect((await claimed(store, queued.id)).fence).toBe(1);
  });

  it("a cancel asked through a one-host executor on the file reaches the worker of the claim", async () => {
    const path = databasePath();
    const store = openStore(path);
    const running = record();
    await store.insertQueued(running);
    const claim = await claimed(store, running.id);
    const notices: string[] = [];
    const stop = await store.subscribe((notice) => notices.push(`${notice.type}:${notice.executionId}`));
    const host = createSkillHost({ database: path, logger: quiet, queue: false });
    hosts.push(host);
    expect(await host.executor.cancel(running.id, { reason: "from the one host" })).toMatchObject({
      status: "running",
    });
    await expect.poll(() => notices).toContain(`cancel:${running.id}`);
    expect(await store.renew(claim, 60_000)).toMatchObject({
      held: true,
      cancelRequested: true,
      cancelReason: "from the one host",
    });
    await stop();
  });

  it("of processes racing to claim the same executions, exactly one claims each", async () => {
    const path = databasePath();
    const store = openStore(path);
    const ids: string[] = [];
    for (let index = 0; index < 40; index++) {
      const queued = record();
      await store.insertQueued(queued);
      ids.push(queued.id);
    }
    const racers = ["racer-a", "racer-b", "racer-c"].map((workerId) => startRacer(path, workerId));
    await Promise.all(racers.map((racer) => racer.nextLine()));
    for (const racer of racers) racer.child.stdin.write(`${JSON.stringify(ids)}\n`);
    const answers = await Promise.all(
      racers.map(async (racer) => JSON.parse(await racer.nextLine()) as string[]),
    );
    ids.forEach((_, index) => {
      expect(answers.map((kinds) => kinds[index]).sort()).toEqual(["claimed", "unavailable", "unavailable"]);
    });
    expect(await store.count({ status: "running" })).toBe(ids.length);
  }, 60_000);
});

/** A child process of its own (see claim-racer.mjs) with its stdout read line by line. */
function startRacer(path: string, workerId: string) {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "jiti/register",
      join(here, "claim-racer.mjs"),
      join(here, "../../src/distributed/sqlite-record-store.ts"),
      path,
      workerId,
    ],
    { cwd: join(here, "../.."), stdio: ["pipe", "pipe", "pipe"] },
  );
  children.push(child);
  let buffered = "";
  let stderr = "";
  const waiting: ((line: string) => void)[] = [];
  const lines: string[] = [];
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      const next = waiting.shift();
      if (next === undefined) lines.push(line);
      else next(line);
    }
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<never>((_, reject) =>
    child.on("exit", (code) =>
      reject(new Error(`${workerId} exited (${code}) before its answer: ${stderr}`)),
    ),
  );
  // It exits once it answered: only a wait for a line that never came hears of the exit.
  exited.catch(() => {});
  return {
    child,
    nextLine(): Promise<string> {
      const line = lines.shift();
      if (line !== undefined) return Promise.resolve(line);
      return Promise.race([new Promise<string>((resolve) => waiting.push(resolve)), exited]);
    },
  };
}
