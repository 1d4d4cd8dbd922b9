import type Database from "better-sqlite3";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { ExecutionError, ExecutionStatus, SkillExecution } from "../types.js";
import type { JobStore } from "./job-store.js";

/** The identity part of the row written when an execution starts (the record itself fits). */
export type ExecutionStart = Pick<
  SkillExecution,
  | "id"
  | "skillId"
  | "skillName"
  | "skillVersion"
  | "apiKeyId"
  | "sessionId"
  | "parentExecutionId"
  | "idempotencyKey"
> &
  Partial<Pick<SkillExecution, "traceId" | "spanId">>;

/** The final state of an execution. */
export interface ExecutionFinish {
  /** The SQLite rowid `start()` resolved with: updating by rowid skips a primary-key search. */
  rowid: number;
  id: string;
  status: ExecutionStatus;
  /** Already serialised (and redacted) output. */
  outputJson: string | null;
  error: ExecutionError | null;
  attempts: number;
  duration: number;
  finishedAt: number;
  /** The execution's span (see `SkillExecution.traceId`): a run the queue resumed gets its ids here. */
  traceId?: string | null;
  spanId?: string | null;
  /** Set for an execution with a job (submitted, or resumed after approval): the job goes with the final row. */
  job?: { apiKeyId: string; skillName: string } | undefined;
}

/** What a `start` may carry besides the row: the input hash of an idempotent one, and statements to run with it. */
export interface StartExtras {
  /** `hashInput` of the caller's input, for an execution with an idempotency key. */
  inputHash?: string | null;
  /** Runs in the same transaction, after the insert (a job row). */
  alsoWrite?: () => void;
}

const NO_EXTRAS: StartExtras = Object.freeze({});

interface Pending {
  kind: "start" | "finish" | "write";
  id: string;
  values: unknown[];
  /** A finish that also drops the execution's job and logs its final event. */
  job?: { apiKeyId: string; skillName: string; status: ExecutionStatus } | undefined;
  /** For a `write`: the statements it runs (inside the batch's transaction); for a `start`, what runs after the insert. */
  work?: (() => void) | undefined;
  resolve: (rowid: number) => void;
  reject: (error: unknown) => void;
}

const INSERT_SQL = `INSERT INTO skill_executions (id, skill_id, skill_name, skill_version, api_key_id, session_id,
  parent_execution_id, idempotency_key, input, input_hash, status, attempts, created_at, runner, trace_id, span_id)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', 0, ?, ?, ?, ?)`;
// Only a row still under way gets its final state: if another host already marked it
// `interrupted` (this runner's lease lapsed), that first final state stands.
const FINISH_SQL = `UPDATE skill_executions SET status = ?, output = ?, error_code = ?, error_message = ?,
  error_data = ?, attempts = ?, duration_ms = ?, finished_at = ?, trace_id = coalesce(?, trace_id),
  span_id = coalesce(?, span_id) WHERE rowid = ? AND status IN ('pending', 'running')`;

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
 * that commit — under load thousands of executions share a few commits, and no promise ever
 * resolves for a row that is not on disk. A failing batch is retried row by row, so one bad
 * row (say a duplicate idempotency key inserted by another process) fails alone.
 */
export class AuditBatcher {
  private readonly insert: Database.Statement;
  private readonly finishStatement: Database.Statement;
  /** Writes a batch in one immediate transaction; made once, as better-sqlite3 builds four wrappers per call. */
  private readonly writeAll: Database.Transaction<(batch: Pending[]) => number[]>;
  private readonly writeOne: Database.Transaction<(item: Pending) => number>;
  private queue: Pending[] = [];
  private flushScheduled = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly database: Database.Database,
    private readonly runnerKey: number,
    private readonly jobs: JobStore,
  ) {
    this.insert = database.prepare(INSERT_SQL);
    this.finishStatement = database.prepare(FINISH_SQL);
    this.writeAll = database.transaction((batch: Pending[]) => batch.map((item) => this.run(item)));
    this.writeOne = database.transaction((item: Pending) => this.run(item));
  }

  /**
   * Queues the `running` row (input already serialised and redacted; `inputHash` of the caller's
   * input for idempotent executions); resolves with its rowid once committed.
   */
  start(
    row: ExecutionStart,
    inputJson: string | null,
    createdAt: number,
    extra: StartExtras = NO_EXTRAS,
  ): Promise<number> {
    return this.enqueue({
      kind: "start",
      id: row.id,
      job: undefined,
      work: extra.alsoWrite,
      values: [
        row.id,
        row.skillId,
        row.skillName,
        row.skillVersion,
        row.apiKeyId,
        row.sessionId,
        row.parentExecutionId,
        row.idempotencyKey,
        inputJson,
        extra.inputHash ?? null,
        createdAt,
        this.runnerKey,
        row.traceId ?? null,
        row.spanId ?? null,
      ],
    });
  }

  /** Queues the final state; resolves (with its rowid) once it is committed. */
  finish(row: ExecutionFinish): Promise<number> {
    const job = row.job === undefined ? undefined : { ...row.job, status: row.status };
    return this.enqueue({
      kind: "finish",
      id: row.id,
      job,
      work: undefined,
      values: [
        row.status,
        row.outputJson,
        row.error?.code ?? null,
        row.error?.message ?? null,
        stringifyData(row.error?.data),
        row.attempts,
        row.duration,
        row.finishedAt,
        row.traceId ?? null,
        row.spanId ?? null,
        row.rowid,
      ],
    });
  }

  /**
   * Queues `work` — statements of the durable side, such as a submit's rows — to run inside the
   * next batch's transaction; resolves once that commits.
   */
  transact(id: string, work: () => void): Promise<number> {
    return this.enqueue({ kind: "write", id, job: undefined, work, values: [] });
  }

  /** Commits everything queued so far now (what a durable write outside the batch must follow). */
  flushNow(): void {
    if (this.flushScheduled) this.drain();
  }

  /** Resolves when everything queued so far is committed. */
  flush(): Promise<void> {
    if (!this.flushScheduled) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private enqueue(item: Omit<Pending, "resolve" | "reject">): Promise<number> {
    return new Promise((resolve, reject) => {
      // Completed in place, not spread into a copy: a spread costs every row a slow object copy.
      const pending = item as Pending;
      pending.resolve = resolve;
      pending.reject = reject;
      this.queue.push(pending);
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      setImmediate(() => this.drain());
    });
  }

  private drain(): void {
    const batch = this.queue;
    this.queue = [];
    this.flushScheduled = false;
    const outcomes = this.write(batch);
    batch.forEach((item, index) => {
      const outcome = outcomes[index]!;
      if (typeof outcome === "number") item.resolve(outcome);
      else {
        item.reject(
          new SkillboxError(
            "DATABASE_ERROR",
            `Writing the audit row of execution ${item.id} failed: ${outcome.message}`,
            {
              cause: outcome,
              data: { executionId: item.id, kind: item.kind },
            },
          ),
        );
      }
    });
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Writes the batch; returns per item the rowid it wrote, or the error that kept it out. */
  private write(batch: Pending[]): (number | Error)[] {
    // One row alone commits by itself, as a plain statement outside a transaction would: no
    // BEGIN and COMMIT around it. Inside a transaction someone else opened, it joins that one.
    const lone = batch[0]!;
    if (
      batch.length === 1 &&
      lone.job === undefined &&
      lone.work === undefined &&
      !this.database.inTransaction
    ) {
      try {
        return [this.run(batch[0]!)];
      } catch (error) {
        return [error as Error];
      }
    }
    try {
      return this.writeAll.immediate(batch);
    } catch {
      return batch.map((item) => {
        try {
          return this.writeOne.immediate(item);
        } catch (error) {
          return error as Error;
        }
      });
    }
  }

  private run(item: Pending): number {
    if (item.kind === "write") {
      item.work!();
      return 0;
    }
    if (item.kind === "start") {
      const rowid = Number(this.insert.run(item.values).lastInsertRowid);
      item.work?.();
      return rowid;
    }
    const finished = this.finishStatement.run(item.values);
    if (item.job !== undefined && finished.changes > 0) {
      this.jobs.finishJob({ id: item.id, ...item.job });
    }
    return Number(item.values[item.values.length - 1]);
  }
}
