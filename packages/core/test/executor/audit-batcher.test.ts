import { rmSync } from "node:fs";
import { join } from "node:path";
import { isSkillboxError, openDatabase, type SkillboxError } from "@skillbox/core";
import { createTemporaryDirectory } from "@skillbox/test-helpers/temporary-host";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { AuditBatcher, type ExecutionStart } from "../../src/executor/audit-batcher.js";
import { createExecutionId } from "../../src/executor/create-execution-id.js";
import { JobStore } from "../../src/executor/job-store.js";

interface AuditRow {
  rowid: number;
  id: string;
  status: string;
  idempotency_key: string | null;
  input: string | null;
  input_hash: string | null;
  output: string | null;
  error_code: string | null;
  error_message: string | null;
  error_data: string | null;
  attempts: number;
  duration_ms: number | null;
  finished_at: number | null;
  runner: number;
}

interface AuditFile {
  /** The connection the batcher writes through. */
  database: Database.Database;
  /** A second connection on the same file: what another process (or a restart) would read. */
  reader: Database.Database;
  batcher: AuditBatcher;
  runnerKey: number;
  /** The rows on disk, by id, as the reader sees them. */
  rows(): Map<string, AuditRow>;
  /** Frames in the write-ahead log since the last `resetLog()`: every commit appends at least one. */
  loggedFrames(): number;
  resetLog(): void;
}

const cleanups: (() => void)[] = [];

afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** A migrated Skillbox database file in a temp folder, a runner row, and a batcher over it. */
function openAuditFile(): AuditFile {
  const directory = createTemporaryDirectory();
  const path = join(directory, "skillbox.db");
  const database = openDatabase({ path });
  // The log is checkpointed only when a test says so, so it counts every commit of the test.
  database.pragma("wal_autocheckpoint = 0");
  const reader = new Database(path, { readonly: true });
  cleanups.push(() => {
    reader.close();
    database.close();
    rmSync(directory, { recursive: true, force: true });
  });
  const runnerKey = Number(
    database
      .prepare("INSERT INTO skillbox_runners (runner_id, pid, host, started_at) VALUES (?, ?, 'test', ?)")
      .run(`runner-${createExecutionId()}`, process.pid, Date.now()).lastInsertRowid,
  );
  const select = reader.prepare<[], AuditRow>("SELECT rowid, * FROM skill_executions ORDER BY rowid");
  const checkpoint = (mode: "PASSIVE" | "TRUNCATE") =>
    (database.pragma(`wal_checkpoint(${mode})`) as { busy: number; log: number }[])[0]!;
  return {
    database,
    reader,
    batcher: new AuditBatcher(database, runnerKey, new JobStore(database, runnerKey)),
    runnerKey,
    rows: () => new Map(select.all().map((row) => [row.id, row])),
    loggedFrames: () => checkpoint("PASSIVE").log,
    resetLog() {
      expect(checkpoint("TRUNCATE").busy).toBe(0);
    },
  };
}

/** The identity of a new execution's row. */
function startRow(overrides: Partial<ExecutionStart> = {}): ExecutionStart {
  return {
    id: createExecutionId(),
    skillId: "skill-1",
    skillName: "charge",
    skillVersion: "1.0.0",
    apiKeyId: "public",
    sessionId: null,
    parentExecutionId: null,
    idempotencyKey: null,
    ...overrides,
  };
}

/** Starts `row` with a small input, as the executor does. */
function start(batcher: AuditBatcher, row: ExecutionStart = startRow()): Promise<number> {
  return batcher.start(row, '{"amount":10}', Date.now());
}

/** The final state of a successful execution of `id` (whose start resolved with `rowid`). */
function success(id: string, rowid: number) {
  return {
    rowid,
    id,
    status: "success" as const,
    outputJson: '{"charged":true}',
    error: null,
    attempts: 1,
    duration: 2.5,
    finishedAt: Date.now(),
  };
}

/** Waits for `promise` to reject and returns what it rejected with. */
async function rejectionOf(promise: Promise<unknown>): Promise<SkillboxError> {
  const error = await promise.then(
    () => {
      throw new Error("expected the write to fail");
    },
    (thrown: unknown) => thrown,
  );
  expect(isSkillboxError(error), String(error)).toBe(true);
  return error as SkillboxError;
}

describe("AuditBatcher", () => {
  describe("group commit", () => {
    it("commits every row queued in one event-loop turn together, in one transaction", async () => {
      const file = openAuditFile();
      file.resetLog();
      const rows = Array.from({ length: 200 }, () => startRow());
      const started = rows.map((row) => start(file.batcher, row));
      // Queued, not written: the rows wait for the end of this turn.
      expect(file.rows().size).toBe(0);
      const rowids = await Promise.all(started);
      expect(file.rows().size).toBe(200);
      // One commit for them all: a commit per row would append at least one frame each.
      expect(file.loggedFrames()).toBeLessThan(rows.length / 4);
      // Their finishes, queued together, share a commit too.
      file.resetLog();
      await Promise.all(rows.map((row, index) => file.batcher.finish(success(row.id, rowids[index]!))));
      expect(file.loggedFrames()).toBeLessThan(rows.length / 4);
      expect([...file.rows().values()].every((row) => row.status === "success")).toBe(true);
    });

    it("gives rows their rowids in the order they were queued, within a batch and across batches", async () => {
      const { batcher, rows } = openAuditFile();
      const first = startRow();
      const second = startRow();
      const batch = await Promise.all([start(batcher, first), start(batcher, second)]);
      const later = startRow();
      const next = await start(batcher, later);
      expect(batch[1]).toBeGreaterThan(batch[0]!);
      expect(next).toBeGreaterThan(batch[1]!);
      // The rowids are the rows' own: "newest first" lists read them in this order.
      const onDisk = rows();
      expect([first, second, later].map((row) => onDisk.get(row.id)?.rowid)).toEqual([...batch, next]);
    });
  });

  describe("durability", () => {
    it("settles each promise only once its row is committed, as another connection reads it", async () => {
      const { batcher, rows, runnerKey } = openAuditFile();
      const row = startRow({ idempotencyKey: "order-1", sessionId: "session-1" });
      const seenAtStart = batcher
        .start(row, '{"amount":10}', 1_700_000_000_000, { inputHash: "f".repeat(64) })
        .then((rowid) => ({ rowid, onDisk: rows().get(row.id) }));
      const { rowid, onDisk } = await seenAtStart;
      expect(onDisk).toMatchObject({
        rowid,
        status: "running",
        idempotency_key: "order-1",
        input: '{"amount":10}',
        input_hash: "f".repeat(64),
        attempts: 0,
        runner: runnerKey,
      });
      const finishedAt = Date.now();
      const seenAtFinish = batcher
        .finish({
          rowid,
          id: row.id,
          status: "error",
          outputJson: null,
          error: { code: "PAYMENT_DECLINED", message: "Card declined", data: { retryAfter: 30 } },
          attempts: 3,
          duration: 12.5,
          finishedAt,
        })
        .then(() => rows().get(row.id));
      expect(await seenAtFinish).toMatchObject({
        status: "error",
        output: null,
        error_code: "PAYMENT_DECLINED",
        error_message: "Card declined",
        error_data: '{"retryAfter":30}',
        attempts: 3,
        duration_ms: 12.5,
        finished_at: finishedAt,
      });
    });

    it("stores no error data it cannot write as JSON, and still records the error", async () => {
      const { batcher, rows } = openAuditFile();
      const row = startRow();
      const rowid = await start(batcher, row);
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      await batcher.finish({
        ...success(row.id, rowid),
        status: "error",
        outputJson: null,
        error: { code: "HANDLER_ERROR", message: "failed", data: cyclic },
      });
      expect(rows().get(row.id)).toMatchObject({ error_code: "HANDLER_ERROR", error_data: null });
    });

    it("never overwrites a final state another host wrote first", async () => {
      const { batcher, database, rows } = openAuditFile();
      const row = startRow();
      const rowid = await start(batcher, row);
      // Another host took this runner for dead and interrupted its row.
      database.prepare("UPDATE skill_executions SET status = 'interrupted' WHERE id = ?").run(row.id);
      await batcher.finish(success(row.id, rowid));
      expect(rows().get(row.id)).toMatchObject({ status: "interrupted", output: null });
    });

    it("flush() resolves at once when idle, and otherwise once everything queued is committed", async () => {
      const { batcher, rows } = openAuditFile();
      await batcher.flush();
      const queued = [startRow(), startRow(), startRow()];
      const started = queued.map((row) => start(batcher, row));
      await batcher.flush();
      // Committed before any of the callers' own promises was awaited.
      expect(queued.every((row) => rows().get(row.id)?.status === "running")).toBe(true);
      await Promise.all(started);
    });

    it("rejects every row of a batch it cannot commit at all, and writes the next batch", async () => {
      const { batcher, database, reader, rows } = openAuditFile();
      // Another process holds the write lock past this connection's patience.
      database.pragma("busy_timeout = 0");
      const holder = new Database(reader.name);
      holder.exec("BEGIN IMMEDIATE");
      const blocked = [startRow(), startRow()];
      const errors = await Promise.all(blocked.map((row) => rejectionOf(start(batcher, row))));
      holder.exec("ROLLBACK");
      holder.close();
      expect(errors.map((error) => error.code)).toEqual(["DATABASE_ERROR", "DATABASE_ERROR"]);
      expect(errors.map((error) => (error.cause as { code?: string }).code)).toEqual([
        "SQLITE_BUSY",
        "SQLITE_BUSY",
      ]);
      expect(rows().size).toBe(0);
      const later = startRow();
      await start(batcher, later);
      expect([...rows().keys()]).toEqual([later.id]);
    });
  });

  describe("per-row fallback", () => {
    it("fails a start that breaks a constraint alone, and commits the rest of its batch once each", async () => {
      const { batcher, rows } = openAuditFile();
      // Another process already ran this owner's key.
      const earlier = startRow({ idempotencyKey: "order-1" });
      await start(batcher, earlier);
      const before = startRow();
      const duplicate = startRow({ idempotencyKey: "order-1" });
      const after = startRow();
      const [beforeRowid, failure, afterRowid] = await Promise.all([
        start(batcher, before),
        rejectionOf(start(batcher, duplicate)),
        start(batcher, after),
      ]);
      expect(failure.code).toBe("DATABASE_ERROR");
      expect(failure.message).toContain(`audit row of execution ${duplicate.id} failed`);
      expect(failure.data).toEqual({ executionId: duplicate.id, kind: "start" });
      expect((failure.cause as { code?: string }).code).toBe("SQLITE_CONSTRAINT_UNIQUE");
      const onDisk = rows();
      expect([...onDisk.keys()]).toEqual([earlier.id, before.id, after.id]);
      expect([onDisk.get(before.id)?.rowid, onDisk.get(after.id)?.rowid]).toEqual([beforeRowid, afterRowid]);
      expect(onDisk.has(duplicate.id)).toBe(false);
    });

    it("fails a finish the database refuses alone, and commits the other finishes of its batch", async () => {
      const { batcher, database, rows } = openAuditFile();
      const executions = [startRow(), startRow(), startRow()];
      const rowids = await Promise.all(executions.map((row) => start(batcher, row)));
      const refused = executions[1]!;
      // A real refusal inside the batch's transaction, for one row only.
      database.exec(`
        CREATE TRIGGER refuse_one_finish BEFORE UPDATE OF status ON skill_executions
        WHEN NEW.id = '${refused.id}'
        BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;
      `);
      const outcomes = await Promise.allSettled(
        executions.map((row, index) => batcher.finish(success(row.id, rowids[index]!))),
      );
      expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      const failure = (outcomes[1] as PromiseRejectedResult).reason as SkillboxError;
      expect(isSkillboxError(failure)).toBe(true);
      expect(failure.code).toBe("DATABASE_ERROR");
      expect(failure.message).toContain("refused by the test");
      expect(failure.data).toEqual({ executionId: refused.id, kind: "finish" });
      const onDisk = rows();
      expect(executions.map((row) => onDisk.get(row.id)?.status)).toEqual(["success", "running", "success"]);
    });

    it("fails a row queued alone in its turn the same way", async () => {
      const { batcher, rows } = openAuditFile();
      const earlier = startRow({ idempotencyKey: "order-1" });
      await start(batcher, earlier);
      const duplicate = startRow({ idempotencyKey: "order-1" });
      const failure = await rejectionOf(start(batcher, duplicate));
      expect(failure.code).toBe("DATABASE_ERROR");
      expect(failure.data).toEqual({ executionId: duplicate.id, kind: "start" });
      expect((failure.cause as { code?: string }).code).toBe("SQLITE_CONSTRAINT_UNIQUE");
      expect([...rows().keys()]).toEqual([earlier.id]);
    });

    it("keeps the starts and finishes of one batch apart when one of them fails", async () => {
      const { batcher, database, rows } = openAuditFile();
      const running = startRow();
      const rowid = await start(batcher, running);
      database.exec(`
        CREATE TRIGGER refuse_one_start BEFORE INSERT ON skill_executions
        WHEN NEW.skill_name = 'refused'
        BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;
      `);
      const fresh = startRow();
      const refused = startRow({ skillName: "refused" });
      const [, freshRowid, failure] = await Promise.all([
        batcher.finish(success(running.id, rowid)),
        start(batcher, fresh),
        rejectionOf(start(batcher, refused)),
      ]);
      expect(freshRowid).toBeGreaterThan(rowid);
      expect(failure.data).toEqual({ executionId: refused.id, kind: "start" });
      const onDisk = rows();
      expect(onDisk.get(running.id)?.status).toBe("success");
      expect(onDisk.get(fresh.id)?.status).toBe("running");
      expect(onDisk.has(refused.id)).toBe(false);
    });
  });
});
