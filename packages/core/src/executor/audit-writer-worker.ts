import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** A row failure reported by the writer thread: which list, which index, why. */
export type RowFailure = [list: "start" | "finish", index: number, message: string];

/** Statements and settings the writer thread needs. */
export interface AuditWriterWorkerOptions {
  databasePath: string;
  busyTimeoutMs: number;
  insertSql: string;
  finishSql: string;
}

// The thread's code is plain CommonJS evaluated in the worker, so it runs the same from the
// TypeScript sources (tests) and from dist. It writes each batch in one immediate transaction;
// if the batch fails it retries row by row, so only the offending rows are reported.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.sqliteModulePath);
const database = new Database(workerData.databasePath);
database.pragma("busy_timeout = " + workerData.busyTimeoutMs);
database.pragma("synchronous = NORMAL");
const insert = database.prepare(workerData.insertSql);
const finish = database.prepare(workerData.finishSql);
const writeAll = database.transaction((starts, finishes) => {
  for (const row of starts) insert.run(row);
  for (const row of finishes) finish.run(row);
});
const writeOne = (list, statement, rows, failures) => rows.forEach((row, index) => {
  try { database.transaction(() => statement.run(row)).immediate(); }
  catch (error) { failures.push([list, index, error.message]); }
});
parentPort.on("message", ({ id, starts, finishes }) => {
  const failures = [];
  try {
    writeAll.immediate(starts, finishes);
  } catch {
    writeOne("start", insert, starts, failures);
    writeOne("finish", finish, finishes, failures);
  }
  parentPort.postMessage({ id, failures });
});
`;

/**
 * A worker thread with its own SQLite connection that commits audit-row batches, so that on a
 * multi-core machine the executor's JavaScript and SQLite's b-tree work run in parallel.
 * Batches are committed in the order they are sent; the thread is referenced only while it is, so an idle
 * writer never keeps the process alive.
 */
export class AuditWriterWorker {
  private readonly worker: Worker;
  private nextId = 0;
  private readonly pending = new Map<
    number,
    { resolve: (failures: RowFailure[]) => void; reject: (error: Error) => void }
  >();
  private failed: Error | undefined;

  constructor(options: AuditWriterWorkerOptions) {
    const sqliteModulePath = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ...options, sqliteModulePath } });
    this.worker.unref();
    this.worker.on("message", (message: { id: number; failures: RowFailure[] }) => {
      const pending = this.pending.get(message.id);
      if (pending === undefined) return;
      this.pending.delete(message.id);
      if (this.pending.size === 0) this.worker.unref();
      pending.resolve(message.failures);
    });
    this.worker.on("error", (error) => this.fail(error));
    this.worker.on("exit", (code) =>
      this.fail(new Error(`the audit writer thread exited with code ${code}`)),
    );
  }

  /** False once the thread has died; callers then write on their own connection. */
  get usable(): boolean {
    return this.failed === undefined;
  }

  /** Commits one batch; resolves with the rows that could not be written. */
  write(starts: unknown[][], finishes: unknown[][]): Promise<RowFailure[]> {
    if (this.failed !== undefined) return Promise.reject(this.failed);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, starts, finishes });
    });
  }

  async close(): Promise<void> {
    this.failed ??= new Error("the audit writer is closed");
    await this.worker.terminate();
  }

  private fail(error: Error): void {
    this.failed ??= error;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const batch of pending) batch.reject(error);
  }
}
