import type Database from "better-sqlite3";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { ExecutionError, ExecutionStatus } from "../types.js";
import { AuditWriterWorker, type RowFailure } from "./audit-writer-worker.js";

/** The row written when an execution starts. */
export interface ExecutionStart {
  id: string;
  skillId: string;
  skillName: string;
  skillVersion: string;
  apiKeyId: string;
  sessionId: string | null;
  parentExecutionId: string | null;
  idempotencyKey: string | null;
  /** Already serialised (and redacted) input. */
  inputJson: string | null;
  createdAt: number;
}

/** The final state of an execution. */
export interface ExecutionFinish {
  id: string;
  status: ExecutionStatus;
  /** Already serialised (and redacted) output. */
  outputJson: string | null;
  error: ExecutionError | null;
  attempts: number;
  duration: number;
  finishedAt: number;
}

/** Where batches are committed: on the caller's connection, or on a writer thread's. */
export type AuditWriteMode = "inline" | "thread";

interface Pending {
  kind: "start" | "finish";
  id: string;
  values: unknown[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

const INSERT_SQL = `INSERT INTO skill_executions (id, skill_id, skill_name, skill_version, api_key_id, session_id,
  parent_execution_id, idempotency_key, input, status, attempts, created_at, runner)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', 0, ?, ?)`;
const FINISH_SQL = `UPDATE skill_executions SET status = ?, output = ?, error_code = ?, error_message = ?,
  error_data = ?, attempts = ?, duration_ms = ?, finished_at = ? WHERE id = ?`;

/** Batches of at most this many rows are written inline even in thread mode: a round trip costs more. */
const INLINE_BATCH_LIMIT = 4;
/**
 * Batches the writer thread may hold at once. More than one lets the executor keep working on
 * the executions of one batch while the thread commits another; a small bound keeps batches
 * large enough to amortise each commit.
 */
const MAX_BATCHES_IN_FLIGHT = Number(process.env.SKILLBOX_AUDIT_BATCHES ?? 4);
const MAX_THREAD_BATCH_ROWS = Number(process.env.SKILLBOX_AUDIT_ROWS ?? 32);

function stringifyData(value: unknown): string | null {
  if (value === undefined) return null;
  try {
    return JSON.stringify(value) ?? null;
  } catch {
    return null;
  }
}

/**
 * Group commit for audit rows. Every start and finish queued during one event-loop turn is
 * committed in a single immediate transaction, and each caller's promise settles only after
 * that commit. With a writer thread, one batch is in flight while the next one accumulates,
 * so batch size follows load. A failing batch is retried row by row, so one bad row (say a
 * duplicate idempotency key inserted by another process) fails alone.
 */
export class AuditBatcher {
  private readonly insert: Database.Statement;
  private readonly finishStatement: Database.Statement;
  private readonly writer: AuditWriterWorker | undefined;
  private queue: Pending[] = [];
  private flushScheduled = false;
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly database: Database.Database,
    private readonly runnerKey: number,
    mode: AuditWriteMode,
    busyTimeoutMs: number,
  ) {
    this.insert = database.prepare(INSERT_SQL);
    this.finishStatement = database.prepare(FINISH_SQL);
    this.writer =
      mode === "thread" && !database.memory
        ? new AuditWriterWorker({
            databasePath: database.name,
            busyTimeoutMs,
            insertSql: INSERT_SQL,
            finishSql: FINISH_SQL,
          })
        : undefined;
  }

  /** Queues the `running` row; resolves once it is committed. */
  start(row: ExecutionStart): Promise<void> {
    return this.enqueue("start", row.id, [
      row.id,
      row.skillId,
      row.skillName,
      row.skillVersion,
      row.apiKeyId,
      row.sessionId,
      row.parentExecutionId,
      row.idempotencyKey,
      row.inputJson,
      row.createdAt,
      this.runnerKey,
    ]);
  }

  /** Queues the final state; resolves once it is committed. */
  finish(row: ExecutionFinish): Promise<void> {
    return this.enqueue("finish", row.id, [
      row.status,
      row.outputJson,
      row.error?.code ?? null,
      row.error?.message ?? null,
      stringifyData(row.error?.data),
      row.attempts,
      row.duration,
      row.finishedAt,
      row.id,
    ]);
  }

  /** Resolves when everything queued so far is committed. */
  flush(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Commits what is queued and stops the writer thread. */
  async close(): Promise<void> {
    await this.flush();
    await this.writer?.close();
  }

  private isIdle(): boolean {
    return this.queue.length === 0 && !this.flushScheduled && this.inFlight === 0;
  }

  private enqueue(kind: Pending["kind"], id: string, values: unknown[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ kind, id, values, resolve, reject });
      if (this.flushScheduled || this.inFlight >= MAX_BATCHES_IN_FLIGHT) return;
      this.flushScheduled = true;
      setImmediate(() => this.drain());
    });
  }

  private drain(): void {
    this.flushScheduled = false;
    if (this.inFlight >= MAX_BATCHES_IN_FLIGHT) return;
    if (this.writer?.usable && (this.inFlight > 0 || this.queue.length > INLINE_BATCH_LIMIT)) {
      // Several smaller batches in flight let the executor work on one group of executions
      // while the thread commits another, instead of both taking turns.
      while (this.queue.length > 0 && this.inFlight < MAX_BATCHES_IN_FLIGHT) {
        this.sendToWriter(this.queue.splice(0, MAX_THREAD_BATCH_ROWS));
      }
      return;
    }
    const batch = this.queue;
    this.queue = [];
    if (batch.length > 0) {
      // Only when nothing is in flight, so the two connections never wait on each other's lock.
      this.settle(batch, this.writeInline(batch));
    }
    this.notifyIfIdle();
  }

  private sendToWriter(batch: Pending[]): void {
    this.inFlight++;
    const starts = batch.filter((item) => item.kind === "start").map((item) => item.values);
    const finishes = batch.filter((item) => item.kind === "finish").map((item) => item.values);
    this.writer!.write(starts, finishes).then(
      (failures) => this.afterWriter(batch, this.failuresByItem(batch, failures)),
      // The thread died: fall back to this connection for this batch and all later ones.
      () => this.afterWriter(batch, this.writeInline(batch)),
    );
  }

  private afterWriter(batch: Pending[], failures: Map<Pending, string>): void {
    this.inFlight--;
    this.settle(batch, failures);
    if (this.queue.length > 0) this.drain();
    else this.notifyIfIdle();
  }

  private failuresByItem(batch: Pending[], failures: RowFailure[]): Map<Pending, string> {
    const result = new Map<Pending, string>();
    if (failures.length === 0) return result;
    const lists = {
      start: batch.filter((item) => item.kind === "start"),
      finish: batch.filter((item) => item.kind === "finish"),
    };
    for (const [list, index, message] of failures) result.set(lists[list][index]!, message);
    return result;
  }

  /** Writes on this connection; returns the rows that failed, with reasons. */
  private writeInline(batch: Pending[]): Map<Pending, string> {
    const failures = new Map<Pending, string>();
    const write = (items: Pending[]) =>
      this.database
        .transaction(() => {
          for (const item of items)
            (item.kind === "start" ? this.insert : this.finishStatement).run(item.values);
        })
        .immediate();
    try {
      write(batch);
    } catch {
      for (const item of batch) {
        try {
          write([item]);
        } catch (error) {
          failures.set(item, (error as Error).message);
        }
      }
    }
    return failures;
  }

  private settle(batch: Pending[], failures: Map<Pending, string>): void {
    for (const item of batch) {
      const failure = failures.get(item);
      if (failure === undefined) item.resolve();
      else {
        item.reject(
          new SkillboxError(
            "DATABASE_ERROR",
            `Writing the audit row of execution ${item.id} failed: ${failure}`,
            {
              data: { executionId: item.id, kind: item.kind },
            },
          ),
        );
      }
    }
  }

  private notifyIfIdle(): void {
    if (!this.isIdle() || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
