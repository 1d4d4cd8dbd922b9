import type Database from "better-sqlite3";
import { migrate } from "../database/migrations.js";
import { openDatabase, resolveDatabasePath } from "../database/open-database.js";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { DurationHistogram, DurationHistogramOptions } from "../executor/duration-histogram-query.js";
import type { SkillStatsOptions, SkillStatsResult } from "../executor/execution-stats.js";
import {
  countExecutionRecords,
  type ExecutionFilters,
  listExecutionRecords,
  listExecutionSummaries,
  readInputHashKey,
  rowToExecution,
} from "../executor/execution-store.js";
import type { ExecutionSummary, ExecutionSummaryOptions } from "../executor/execution-summary.js";
import type { ExecutionTimeline, ExecutionTimelineOptions } from "../executor/execution-timeline-query.js";
import type { SkillExecution } from "../types.js";
import type {
  ApproveRecordOptions,
  CancelRequestResult,
  ClaimOptions,
  ClaimResult,
  ClaimToken,
  DispatchTarget,
  EndUnclaimedOptions,
  ExecutionRecordStore,
  FinalOutcome,
  InsertQueuedResult,
  ListWorkersOptions,
  PauseOptions,
  QueuedExecutionRecord,
  RecordNotice,
  RecoverExpiredOptions,
  RecoveredExecution,
  RenewResult,
  RequestCancelOptions,
  StaleQueuedExecution,
  StaleQueuedOptions,
  WorkerHeartbeat,
  WorkerRecord,
} from "./execution-record-store.js";
import { workerOf } from "./record-rows.js";
import { claimExecution, finishClaim, pauseClaim, recordClaimProgress, renewClaim } from "./sqlite-claims.js";
import { approveExecution, endUnclaimed, recoverExpired, requestCancel } from "./sqlite-decisions.js";
import { recordNestedExecution } from "./sqlite-nested-record.js";
import { appendStatus, readExecution, type SqliteRecordContext } from "./sqlite-record-context.js";
import { SqliteRecordNotices } from "./sqlite-record-notices.js";
import { databaseNow, prepareRecordStatements, RECORD_STORE_RUNNER_ID } from "./sqlite-record-statements.js";
import { SqliteRecordStats } from "./sqlite-record-stats.js";

/** Options of {@link createSqliteRecordStore}. */
export interface SqliteRecordStoreOptions {
  /** The database file (the same file, format and migrations as the embedded store), or `:memory:`. */
  path: string;
  /** How long a writer waits for another process's lock, in ms (default 5000). */
  busyTimeoutMs?: number;
  /** How often `subscribe` reads what changed, in ms (default 100, from 5 to 60 000). */
  pollIntervalMs?: number;
}

/** The {@link ExecutionRecordStore} over one SQLite file, shared by the processes of one machine. */
export interface SqliteRecordStore extends ExecutionRecordStore {
  readonly dialect: "sqlite";
  /** The file it opened, as `resolveDatabasePath` resolves it. */
  readonly path: string;
}

const DEFAULT_POLL_INTERVAL_MS = 100;

/**
 * Opens (creating and migrating) the shared record in a SQLite file: the same file the embedded
 * store uses, opened by `openDatabase` (WAL, busy timeout), so several processes of one machine
 * share executions. Every write runs in an immediate transaction, which SQLite serialises across
 * processes: a claim is a compare-and-set on the job row, and of two claims one wins. Its rows
 * name a runner of their own that the one-host recovery never takes for dead: their liveness is
 * each claim's lease, and a one-host executor on the same file leaves them alone.
 */
export function createSqliteRecordStore(options: SqliteRecordStoreOptions): SqliteRecordStore {
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  if (typeof pollIntervalMs !== "number" || !(pollIntervalMs >= 5 && pollIntervalMs <= 60_000)) {
    throw new SkillboxError(
      "CONFIG_INVALID",
      `createSqliteRecordStore: \`pollIntervalMs\` must be a number of milliseconds from 5 to 60000, got ${JSON.stringify(options.pollIntervalMs)}`,
    );
  }
  const path = resolveDatabasePath(options.path);
  const database = openDatabase({ path, busyTimeoutMs: options.busyTimeoutMs });
  try {
    return new SqliteExecutionRecords(database, path, pollIntervalMs);
  } catch (error) {
    database.close();
    throw error;
  }
}

class SqliteExecutionRecords implements SqliteRecordStore {
  readonly dialect = "sqlite" as const;
  private readonly context: SqliteRecordContext;
  private readonly subscriptions = new Set<SqliteRecordNotices>();
  private readonly stats: SqliteRecordStats;
  private hashKey: Buffer | undefined;

  constructor(
    private readonly database: Database.Database,
    readonly path: string,
    private readonly pollIntervalMs: number,
  ) {
    const statements = prepareRecordStatements(database);
    const runnerKey = statements.runnerKey.get(RECORD_STORE_RUNNER_ID)?.id;
    if (runnerKey === undefined) {
      throw new SkillboxError(
        "DATABASE_ERROR",
        `createSqliteRecordStore: ${path} has no runner row '${RECORD_STORE_RUNNER_ID}' (made by migration 7); ` +
          "restore it from a backup or let a new file be made",
      );
    }
    this.context = { database, statements, runnerKey };
    this.stats = new SqliteRecordStats(this.context);
  }

  async migrate(): Promise<void> {
    migrate(this.database);
  }

  async now(): Promise<number> {
    return databaseNow(this.context.statements);
  }

  async insertQueued(record: QueuedExecutionRecord): Promise<InsertQueuedResult> {
    const { context } = this;
    const { statements } = context;
    return this.database
      .transaction((): InsertQueuedResult => {
        if (record.idempotencyKey !== null) {
          const existing = statements.byIdempotencyKey.get(record.apiKeyId, record.idempotencyKey);
          if (existing !== undefined) {
            return { inserted: false, existing: rowToExecution(existing), inputHash: existing.input_hash };
          }
        }
        const now = databaseNow(statements);
        // The deadline on the database clock, as the claim and the recovery compare it.
        const deadlineAt = record.totalTimeoutMs === null ? null : now + Math.ceil(record.totalTimeoutMs);
        const values = {
          ...record,
          now,
          deadlineAt,
          rerunnable: record.rerunnable ? 1 : 0,
          runner: context.runnerKey,
        };
        statements.insertExecution.run(values);
        statements.insertJob.run(values);
        appendStatus(
          context,
          { id: record.id, apiKeyId: record.apiKeyId, skillName: record.skillName },
          "queued",
          now,
        );
        return { inserted: true, execution: readExecution(context, record.id)! };
      })
      .immediate();
  }

  async markEnqueued(ids: readonly string[]): Promise<void> {
    const { statements } = this.context;
    if (ids.length === 0) return;
    this.database
      .transaction(() => {
        const now = databaseNow(statements);
        for (const id of ids) statements.markEnqueued.run(now, id);
      })
      .immediate();
  }

  async staleQueued(options: StaleQueuedOptions): Promise<StaleQueuedExecution[]> {
    const { statements } = this.context;
    const limit = Math.max(0, Math.min(Math.trunc(options.limit), 10_000));
    if (!(limit > 0)) return [];
    const before = databaseNow(statements) - Math.max(0, options.olderThanMs);
    return statements.staleQueued
      .all(before, limit)
      .map((row) => ({ id: row.id, queue: row.queue, contentHash: row.content_hash ?? "" }));
  }

  async dispatchTarget(id: string): Promise<DispatchTarget | undefined> {
    const row = this.context.statements.dispatchTarget.get(id);
    return row === undefined ? undefined : { queue: row.queue, contentHash: row.content_hash ?? "" };
  }

  // Made by migration 3 with the file: every process and host on it hashes alike.
  async inputHashKey(): Promise<Buffer> {
    this.hashKey ??= readInputHashKey(this.database);
    return this.hashKey;
  }

  async get(id: string, owner?: string): Promise<SkillExecution | undefined> {
    return readExecution(this.context, id, owner);
  }

  // Ids come from hosts whose clocks disagree with the database's, which stamps created_at: the
  // time ranges read created_at alone (see `ExecutionQueryOptions`).
  async list(filters: ExecutionFilters = {}): Promise<SkillExecution[]> {
    return listExecutionRecords(this.database, filters, { seekById: false });
  }

  async count(filters: ExecutionFilters = {}): Promise<number> {
    return countExecutionRecords(this.database, filters, { seekById: false });
  }

  async listSummaries(filters: ExecutionFilters & ExecutionSummaryOptions = {}): Promise<ExecutionSummary[]> {
    return listExecutionSummaries(this.database, filters, { seekById: false });
  }

  async skillStats(
    owner: string,
    names: readonly string[],
    options: SkillStatsOptions = {},
  ): Promise<SkillStatsResult> {
    return this.stats.skillStats(owner, names, options);
  }

  async executionTimeline(owner: string, options: ExecutionTimelineOptions = {}): Promise<ExecutionTimeline> {
    return this.stats.executionTimeline(owner, options);
  }

  async durationHistogram(
    owner: string,
    names: readonly string[],
    options: DurationHistogramOptions = {},
  ): Promise<DurationHistogram> {
    return this.stats.durationHistogram(owner, names, options);
  }

  async findByIdempotencyKey(
    owner: string,
    key: string,
  ): Promise<{ execution: SkillExecution; inputHash: string | null } | undefined> {
    const row = this.context.statements.byIdempotencyKey.get(owner, key);
    return row === undefined ? undefined : { execution: rowToExecution(row), inputHash: row.input_hash };
  }

  async claim(options: ClaimOptions): Promise<ClaimResult> {
    return claimExecution(this.context, options);
  }

  async renew(claim: ClaimToken, leaseMs: number): Promise<RenewResult> {
    return renewClaim(this.context, claim, leaseMs);
  }

  async recordNested(execution: SkillExecution, options: { contentHash: string }): Promise<void> {
    recordNestedExecution(this.context, execution, options.contentHash);
  }

  async finish(claim: ClaimToken, outcome: FinalOutcome): Promise<boolean> {
    return finishClaim(this.context, claim, outcome);
  }

  async recordProgress(claim: ClaimToken, progressJson: string): Promise<boolean> {
    return recordClaimProgress(this.context, claim, progressJson);
  }

  async pause(claim: ClaimToken, pause: PauseOptions): Promise<boolean> {
    return pauseClaim(this.context, claim, pause);
  }

  async approve(options: ApproveRecordOptions): Promise<SkillExecution | undefined> {
    return approveExecution(this.context, options);
  }

  async endUnclaimed(options: EndUnclaimedOptions): Promise<SkillExecution | undefined> {
    return endUnclaimed(this.context, options);
  }

  async requestCancel(options: RequestCancelOptions): Promise<CancelRequestResult> {
    return requestCancel(this.context, options);
  }

  async recoverExpired(options: RecoverExpiredOptions): Promise<RecoveredExecution[]> {
    return recoverExpired(this.context, options);
  }

  async heartbeatWorker(worker: WorkerHeartbeat): Promise<void> {
    const { statements } = this.context;
    statements.upsertWorker.run({
      workerId: worker.workerId,
      host: worker.host,
      pid: worker.pid,
      queues: JSON.stringify(worker.queues),
      skills: JSON.stringify(worker.skills),
      concurrency: worker.concurrency,
      running: worker.running,
      startedAt: worker.startedAt,
      now: databaseNow(statements),
    });
  }

  async removeWorker(workerId: string): Promise<void> {
    this.context.statements.deleteWorker.run(workerId);
  }

  async removeStaleWorkers(options: { olderThanMs: number }): Promise<number> {
    const since = databaseNow(this.context.statements) - Math.max(0, Math.trunc(options.olderThanMs));
    // Prepared here rather than with the others: it runs a few times an hour at most.
    return this.database.prepare("DELETE FROM skillbox_workers WHERE last_heartbeat_at < ?").run(since)
      .changes;
  }

  async listWorkers(options: ListWorkersOptions = {}): Promise<WorkerRecord[]> {
    const { statements } = this.context;
    const now = databaseNow(statements);
    const since = options.withinMs === undefined ? Number.MIN_SAFE_INTEGER : now - options.withinMs;
    return statements.workers.all({ now, since }).map(workerOf);
  }

  async subscribe(listener: (notice: RecordNotice) => void): Promise<() => Promise<void>> {
    const notices = new SqliteRecordNotices(this.context, listener, this.pollIntervalMs);
    this.subscriptions.add(notices);
    return async () => {
      notices.stop();
      this.subscriptions.delete(notices);
    };
  }

  async close(): Promise<void> {
    for (const notices of this.subscriptions) notices.stop();
    this.subscriptions.clear();
    if (this.database.open) this.database.close();
  }
}
