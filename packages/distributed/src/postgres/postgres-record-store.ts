import type {
  ApproveRecordOptions,
  CancelRequestResult,
  ClaimOptions,
  ClaimResult,
  ClaimToken,
  DispatchTarget,
  DurationHistogram,
  DurationHistogramOptions,
  EndUnclaimedOptions,
  ExecutionFilters,
  ExecutionRecordStore,
  ExecutionSummary,
  ExecutionSummaryOptions,
  ExecutionTimeline,
  ExecutionTimelineOptions,
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
  SkillExecution,
  SkillStatsOptions,
  SkillStatsResult,
  StaleQueuedExecution,
  StaleQueuedOptions,
  WorkerHeartbeat,
  WorkerRecord,
} from "@skillbox/core";
import { SkillboxError } from "@skillbox/core";
import { rowToExecution } from "@skillbox/core/internal";
import pg from "pg";
import { claim, finish, pause, recordProgress, renew } from "./postgres-claims.js";
import { DATABASE_NOW } from "./postgres-clock.js";
import { approve, endUnclaimed, requestCancel } from "./postgres-decisions.js";
import { describeTarget } from "./postgres-errors.js";
import { PostgresListener } from "./postgres-listener.js";
import {
  migratePostgres,
  POSTGRES_SCHEMA_VERSION,
  readPostgresSchemaVersion,
} from "./postgres-migrations.js";
import { recordNested } from "./postgres-nested-record.js";
import { countExecutions, getExecution, listExecutions, listSummaries } from "./postgres-reads.js";
import { recoverExpired } from "./postgres-recovery.js";
import { PostgresSession, RECORD_TYPES } from "./postgres-session.js";
import { durationHistogram, executionTimeline, skillStats } from "./postgres-stats.js";
import { byIdempotencyKey, insertQueued, markEnqueued, staleQueued } from "./postgres-submissions.js";
import { heartbeatWorker, listWorkers, removeStaleWorkers, removeWorker } from "./postgres-workers.js";

/** Options of {@link createPostgresRecordStore}. */
export interface PostgresRecordStoreOptions {
  /** `postgres://user:password@host:port/database` (the password never shows in an error). */
  url: string;
  /** The connection pool: at most `max` connections (default 10), plus one for `subscribe()`. */
  pool?: { max?: number };
  /** `application_name` of the connections, as `pg_stat_activity` shows them (default `skillbox`). */
  applicationName?: string;
  /** Longest a statement may run before the server cancels it, in ms (default 30 000). */
  statementTimeoutMs?: number;
}

const DEFAULT_POOL_MAX = 10;
const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
/** How long getting a connection may take before the call fails `STORE_UNAVAILABLE`. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The shared record of executions in PostgreSQL, for executions spread over many hosts: the
 * {@link ExecutionRecordStore} contract over a `pg.Pool`. Every transaction runs on one client
 * (BEGIN/COMMIT/ROLLBACK, always released); every time it stamps or compares is the database's
 * clock; claims are compare-and-set on the job row with a fencing counter; notices travel by
 * `LISTEN/NOTIFY` on one dedicated connection that reconnects when it breaks. A server that
 * cannot be reached answers `STORE_UNAVAILABLE` naming its host and port, never the password.
 * Construct it with {@link createPostgresRecordStore} and `await store.migrate()` before use.
 */
export class PostgresRecordStore implements ExecutionRecordStore {
  readonly dialect = "postgres" as const;
  private readonly session: PostgresSession;
  private readonly listener: PostgresListener;
  private closing: Promise<void> | undefined;
  private hashKey: Promise<Buffer> | undefined;

  constructor(options: PostgresRecordStoreOptions) {
    if (typeof options.url !== "string" || !/^postgres(ql)?:\/\//.test(options.url)) {
      throw new SkillboxError(
        "CONFIG_INVALID",
        "PostgresRecordStore: `url` must be a postgres:// or postgresql:// URL",
      );
    }
    const max = options.pool?.max ?? DEFAULT_POOL_MAX;
    if (!Number.isInteger(max) || max < 1 || max > 1000) {
      throw new SkillboxError(
        "CONFIG_INVALID",
        `PostgresRecordStore: \`pool.max\` must be a whole number from 1 to 1000, got ${max}`,
      );
    }
    const target = describeTarget(options.url);
    const applicationName = options.applicationName ?? "skillbox";
    const pool = new pg.Pool({
      connectionString: options.url,
      max,
      application_name: applicationName,
      statement_timeout: options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      types: RECORD_TYPES,
    });
    // An idle client whose connection breaks (server restart) emits on the pool: without a
    // listener that would crash the process. The pool drops it; the next query connects anew.
    pool.on("error", () => undefined);
    this.session = new PostgresSession(pool, target);
    this.listener = new PostgresListener({
      url: options.url,
      applicationName: `${applicationName}:listener`,
      target,
    });
  }

  migrate(): Promise<void> {
    return migratePostgres(this.session);
  }

  /** The schema version applied to the database and the newest this code knows (`skillbox doctor`). */
  async schemaVersion(): Promise<{ applied: number; latest: number }> {
    return { applied: await readPostgresSchemaVersion(this.session), latest: POSTGRES_SCHEMA_VERSION };
  }

  /**
   * How full the server's NOTIFY queue is, from 0 to 1 (`pg_notification_queue_usage()`): a
   * listening session that stopped reading (a stopped process) holds it back, and once it is
   * full every transaction that notifies fails at commit.
   */
  async notificationQueueUsage(): Promise<number> {
    const row = await this.session.one<{ usage: number }>(
      "SELECT pg_notification_queue_usage()::float8 AS usage",
    );
    return Number(row?.usage ?? 0);
  }

  async now(): Promise<number> {
    const row = await this.session.one<{ now: number }>(`SELECT ${DATABASE_NOW} AS now`);
    return row?.now ?? Date.now();
  }

  insertQueued(record: QueuedExecutionRecord): Promise<InsertQueuedResult> {
    return insertQueued(this.session, record);
  }

  markEnqueued(ids: readonly string[]): Promise<void> {
    return markEnqueued(this.session, ids);
  }

  staleQueued(options: StaleQueuedOptions): Promise<StaleQueuedExecution[]> {
    return staleQueued(this.session, options);
  }

  async dispatchTarget(id: string): Promise<DispatchTarget | undefined> {
    const row = await this.session.one<{ queue: string | null; content_hash: string | null }>(
      "SELECT queue, content_hash FROM skill_execution_jobs WHERE execution_id = $1",
      [id],
    );
    return row === undefined
      ? undefined
      : { queue: row.queue ?? "default", contentHash: row.content_hash ?? "" };
  }

  inputHashKey(): Promise<Buffer> {
    // Read once: the key never changes (a failed read is tried again next time).
    this.hashKey ??= readInputHashKey(this.session).catch((error: unknown) => {
      this.hashKey = undefined;
      throw error;
    });
    return this.hashKey;
  }

  get(id: string, owner?: string): Promise<SkillExecution | undefined> {
    return getExecution(this.session, id, owner);
  }

  list(filters?: ExecutionFilters): Promise<SkillExecution[]> {
    return listExecutions(this.session, filters);
  }

  count(filters?: ExecutionFilters): Promise<number> {
    return countExecutions(this.session, filters);
  }

  listSummaries(filters?: ExecutionFilters & ExecutionSummaryOptions): Promise<ExecutionSummary[]> {
    return listSummaries(this.session, filters);
  }

  skillStats(
    owner: string,
    names: readonly string[],
    options?: SkillStatsOptions,
  ): Promise<SkillStatsResult> {
    return skillStats(this.session, owner, names, options);
  }

  executionTimeline(owner: string, options?: ExecutionTimelineOptions): Promise<ExecutionTimeline> {
    return executionTimeline(this.session, owner, options);
  }

  durationHistogram(
    owner: string,
    names: readonly string[],
    options?: DurationHistogramOptions,
  ): Promise<DurationHistogram> {
    return durationHistogram(this.session, owner, names, options);
  }

  async findByIdempotencyKey(
    owner: string,
    key: string,
  ): Promise<{ execution: SkillExecution; inputHash: string | null } | undefined> {
    const row = await byIdempotencyKey(this.session, owner, key);
    return row === undefined ? undefined : { execution: rowToExecution(row), inputHash: row.input_hash };
  }

  claim(options: ClaimOptions): Promise<ClaimResult> {
    return claim(this.session, options);
  }

  renew(token: ClaimToken, leaseMs: number): Promise<RenewResult> {
    return renew(this.session, token, leaseMs);
  }

  recordNested(execution: SkillExecution, options: { contentHash: string }): Promise<void> {
    return recordNested(this.session, execution, options.contentHash);
  }

  finish(token: ClaimToken, outcome: FinalOutcome): Promise<boolean> {
    return finish(this.session, token, outcome);
  }

  recordProgress(token: ClaimToken, progressJson: string): Promise<boolean> {
    return recordProgress(this.session, token, progressJson);
  }

  pause(token: ClaimToken, options: PauseOptions): Promise<boolean> {
    return pause(this.session, token, options);
  }

  approve(options: ApproveRecordOptions): Promise<SkillExecution | undefined> {
    return approve(this.session, options);
  }

  endUnclaimed(options: EndUnclaimedOptions): Promise<SkillExecution | undefined> {
    return endUnclaimed(this.session, options);
  }

  requestCancel(options: RequestCancelOptions): Promise<CancelRequestResult> {
    return requestCancel(this.session, options);
  }

  recoverExpired(options: RecoverExpiredOptions): Promise<RecoveredExecution[]> {
    return recoverExpired(this.session, options);
  }

  heartbeatWorker(worker: WorkerHeartbeat): Promise<void> {
    return heartbeatWorker(this.session, worker);
  }

  removeWorker(workerId: string): Promise<void> {
    return removeWorker(this.session, workerId);
  }

  removeStaleWorkers(options: { olderThanMs: number }): Promise<number> {
    return removeStaleWorkers(this.session, options.olderThanMs);
  }

  listWorkers(options?: ListWorkersOptions): Promise<WorkerRecord[]> {
    return listWorkers(this.session, options);
  }

  subscribe(listener: (notice: RecordNotice) => void): Promise<() => Promise<void>> {
    return this.listener.add(listener);
  }

  /** Stops listening and ends the pool (idempotent). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.listener.close();
      await this.session.pool.end();
    })();
    return this.closing;
  }
}

/**
 * The database's input hash key: made by migration 1, or here when a restore lost its row (one
 * host's insert wins, every host reads the same key back).
 */
async function readInputHashKey(session: PostgresSession): Promise<Buffer> {
  await session.run(
    `INSERT INTO skillbox_keys (name, key)
     VALUES ('input_hash', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'))
     ON CONFLICT (name) DO NOTHING`,
  );
  const row = await session.one<{ key: Buffer }>("SELECT key FROM skillbox_keys WHERE name = 'input_hash'");
  if (row === undefined || !Buffer.isBuffer(row.key) || row.key.length < 16) {
    throw new SkillboxError(
      "DATABASE_ERROR",
      "PostgresRecordStore: the database has no usable input hash key (skillbox_keys)",
    );
  }
  return row.key;
}

/**
 * A {@link PostgresRecordStore} on `options.url`. It connects lazily: `await store.migrate()`
 * (safe from many hosts at once) before the first use, `await store.close()` at the end.
 *
 * @example
 * const store = createPostgresRecordStore({ url: process.env.SKILLBOX_DB!, pool: { max: 20 } });
 * await store.migrate();
 */
export function createPostgresRecordStore(options: PostgresRecordStoreOptions): PostgresRecordStore {
  return new PostgresRecordStore(options);
}
