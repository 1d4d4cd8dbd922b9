import { hostname } from "node:os";
import type Database from "better-sqlite3";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { ExecutionError, ExecutionStatus, SkillExecution } from "../types.js";
import {
  AuditBatcher,
  type ExecutionFinish,
  type ExecutionStart,
  type StartExtras,
} from "./audit-batcher.js";
import {
  type DurationHistogram,
  type DurationHistogramOptions,
  DurationHistogramQuery,
} from "./duration-histogram-query.js";
import { recordedError } from "./execution-failure.js";
import {
  checkedInstant,
  ExecutionStats,
  type SkillStatsOptions,
  type SkillStatsResult,
} from "./execution-stats.js";
import {
  type ExecutionSummary,
  type ExecutionSummaryOptions,
  type ExecutionSummaryRow,
  identityOf,
  resolveSummaryOptions,
  rowToSummary,
  SUMMARY_COLUMNS,
  timingOf,
} from "./execution-summary.js";
import {
  type ExecutionTimeline,
  type ExecutionTimelineOptions,
  ExecutionTimelineQuery,
} from "./execution-timeline-query.js";
import { JobStore } from "./job-store.js";
import { uuidV7LowerBound } from "./uuid-v7-lower-bound.js";

/** Filters of `listExecutions` / `countExecutions`. */
export interface ExecutionFilters {
  /** Caller owner id (`apiKeyId`). */
  owner?: string;
  /** Skill name. */
  skill?: string;
  status?: ExecutionStatus | ExecutionStatus[];
  sessionId?: string;
  parentExecutionId?: string;
  /** Only executions created at or after this instant. */
  since?: Date | string | number;
  /** Only executions created before this instant (with `since`, the range `[since, until)`). */
  until?: Date | string | number;
  /** Page size (default 50, at most 1000). */
  limit?: number;
  offset?: number;
}

/** A row of `skill_executions` as `SELECT *` reads it (the columns records show). */
export interface ExecutionRow {
  id: string;
  skill_id: string;
  skill_name: string;
  skill_version: string;
  api_key_id: string;
  session_id: string | null;
  parent_execution_id: string | null;
  idempotency_key: string | null;
  input: string | null;
  output: string | null;
  status: ExecutionStatus;
  error_code: string | null;
  error_message: string | null;
  error_data: string | null;
  attempts: number;
  duration_ms: number | null;
  progress: string | null;
  approval: string | null;
  created_at: number;
  finished_at: number | null;
  trace_id: string | null;
  span_id: string | null;
}

const MAX_PAGE = 1000;

/** Maps a full row to the record callers get (bodies parsed, error as recorded). */
export function rowToExecution(row: ExecutionRow): SkillExecution {
  const error: ExecutionError | null =
    row.error_code === null
      ? null
      : row.error_data === null
        ? { code: row.error_code, message: row.error_message ?? "" }
        : { code: row.error_code, message: row.error_message ?? "", data: JSON.parse(row.error_data) };
  return {
    ...identityOf(row),
    input: row.input === null ? null : JSON.parse(row.input),
    output: row.output === null ? null : JSON.parse(row.output),
    status: row.status,
    error: recordedError(row.status, error, `${row.skill_name}@${row.skill_version}`),
    ...timingOf(row),
  } as SkillExecution;
}

/** Runner ids of the stores open in this process: their rows are live whatever the pid says. */
const OPEN_RUNNERS = new Set<string>();

/** How long a runner's lease lasts when the options set none; it is renewed every third of it. */
const DEFAULT_RUNNER_LEASE_MS = 30_000;
/** Longest lease a timer can renew (Node timers hold at most 2^31 - 1 ms). */
const MAX_RUNNER_LEASE_MS = 2_147_483_647;
const MIN_RUNNER_LEASE_MS = 30;

/** Options of {@link ExecutionStore}. */
export interface ExecutionStoreOptions {
  /**
   * How long this runner counts as alive without renewing its lease, in ms (default 30 000). It
   * renews every third of that; another host marks its rows `interrupted` once it lapses.
   */
  leaseMs?: number;
  /**
   * Whether each renewal also sweeps: rows of runners whose lease expired (any host) or whose
   * process is gone (this host) are marked `interrupted` (default true).
   */
  recover?: boolean;
  /** Told when this runner finds its lease was taken (another host declared it dead). */
  onLeaseLost?(): void;
}

interface RunnerRow {
  id: number;
  runner_id: string;
  pid: number;
  host: string;
  started_at: number;
  lease_expires_at: number | null;
  closed_at: number | null;
}

/** An execution found by idempotency key, with what a repeat is compared against. */
export interface IdempotentExecution {
  execution: SkillExecution;
  /** The first caller's input hashed by `hashInput` (null for rows from before keyed hashes). */
  inputHash: string | null;
}

function checkedLeaseMs(value: number | undefined): number {
  if (value === undefined) return DEFAULT_RUNNER_LEASE_MS;
  if (typeof value !== "number" || !(value >= MIN_RUNNER_LEASE_MS && value <= MAX_RUNNER_LEASE_MS)) {
    throw new SkillboxError(
      "CONFIG_INVALID",
      `SkillExecutor: \`runnerLeaseMs\` must be a number of milliseconds from ${MIN_RUNNER_LEASE_MS} to ${MAX_RUNNER_LEASE_MS}, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** The database's key of `hashInput` (see migration 3), alike in every process on the file. */
export function readInputHashKey(database: Database.Database): Buffer {
  const key = database
    .prepare<[], Buffer>("SELECT key FROM skillbox_keys WHERE name = 'input_hash'")
    .pluck()
    .get();
  if (!Buffer.isBuffer(key) || key.length < 16) {
    throw new SkillboxError(
      "DATABASE_ERROR",
      "SkillExecutor: the database has no input hash key (table `skillbox_keys`, name 'input_hash'); " +
        "open it with openDatabase(), which migrates it, or restore the row from a backup",
    );
  }
  return key;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The audit trail in `skill_executions`: group-committed writes (see `AuditBatcher`) and the
 * queries behind `getExecution`, `listExecutions` and `countExecutions`.
 */
export class ExecutionStore {
  /** Identifies this store's process, so a later start can tell which `running` rows were orphaned. */
  readonly runnerId: string;
  /** How long this runner's lease lasts without renewal, in ms. */
  readonly leaseMs: number;
  /** The database's key of `hashInput` (made by its migration): alike in every process on the file. */
  readonly inputHashKey: Buffer;
  /** This runner's key in `skillbox_runners`. */
  readonly runnerKey: number;
  /** The durable side of the same file: jobs, approvals, cancel requests, events. */
  readonly jobs: JobStore;
  private readonly statements;
  private readonly batcher: AuditBatcher;
  private readonly host = hostname();
  private readonly recover: boolean;
  private readonly onLeaseLost: (() => void) | undefined;
  private readonly renewal: NodeJS.Timeout;
  /** The statistics query, prepared on first use: most stores never answer a dashboard. */
  private skillStats: ExecutionStats | undefined;
  private timelineQuery: ExecutionTimelineQuery | undefined;
  private histogramQuery: DurationHistogramQuery | undefined;

  constructor(database: Database.Database, runnerId: string, options: ExecutionStoreOptions = {}) {
    this.leaseMs = checkedLeaseMs(options.leaseMs);
    this.recover = options.recover ?? true;
    this.onLeaseLost = options.onLeaseLost;
    this.database = database;
    this.runnerId = runnerId;
    this.inputHashKey = readInputHashKey(database);
    const now = Date.now();
    const runnerKey = Number(
      database
        .prepare(
          "INSERT INTO skillbox_runners (runner_id, pid, host, started_at, lease_expires_at) VALUES (?, ?, ?, ?, ?)",
        )
        .run(runnerId, process.pid, this.host, now, now + this.leaseMs).lastInsertRowid,
    );
    this.runnerKey = runnerKey;
    OPEN_RUNNERS.add(runnerId);
    this.jobs = new JobStore(database, runnerKey);
    this.batcher = new AuditBatcher(database, runnerKey, this.jobs);
    this.statements = {
      byId: database.prepare<[string], ExecutionRow>("SELECT * FROM skill_executions WHERE id = ?"),
      byIdempotencyKey: database.prepare<[string, string], ExecutionRow & { input_hash: string | null }>(
        "SELECT * FROM skill_executions WHERE api_key_id = ? AND idempotency_key = ?",
      ),
      // Runners that may be dead: those of this host (their pid can be checked) and those whose
      // lease lapsed. A lease-less runner (written by an older version) is only checked by pid.
      suspectRunners: database.prepare<[string, number], RunnerRow>(
        `SELECT id, runner_id, pid, host, started_at, lease_expires_at, closed_at FROM skillbox_runners
         WHERE closed_at IS NULL AND (host = ? OR lease_expires_at < ?)`,
      ),
      runnerOf: database.prepare<[string], RunnerRow>(
        `SELECT id, runner_id, pid, host, started_at, lease_expires_at, closed_at FROM skillbox_runners
         WHERE id = (SELECT runner FROM skill_executions WHERE id = ?)`,
      ),
      // Claims a dead runner in the recovering transaction, re-checking what was read before it:
      // of two hosts sweeping at once one recovers, and a runner that renewed meanwhile is spared.
      claimRunner: database.prepare<[number, number, number, number]>(
        `UPDATE skillbox_runners SET closed_at = ?
         WHERE id = ? AND closed_at IS NULL AND (? = 1 OR lease_expires_at < ?)`,
      ),
      // A runner's rows all have ids minted after it started, so the primary key bounds the scan.
      interruptRunner: database.prepare<[number, string, number]>(
        `UPDATE skill_executions SET status = 'interrupted', error_code = 'INTERRUPTED',
           error_message = 'The process running this execution stopped before it finished', finished_at = ?
         WHERE id >= ? AND runner = ? AND status IN ('pending', 'running')`,
      ),
      deleteExecution: database.prepare<[string], { created_at: number }>(
        "DELETE FROM skill_executions WHERE id = ? RETURNING created_at",
      ),
      // Its events come after its creation: the time index bounds the scan (an event left by a
      // clock that stepped back is pruned with the rest).
      deleteEvents: database.prepare<[number, string]>(
        "DELETE FROM skill_execution_events WHERE created_at >= ? AND execution_id = ?",
      ),
      renewLease: database.prepare<[number, number]>(
        "UPDATE skillbox_runners SET lease_expires_at = ? WHERE id = ? AND closed_at IS NULL",
      ),
      reopenRunner: database.prepare<[number, number]>(
        "UPDATE skillbox_runners SET closed_at = NULL, lease_expires_at = ? WHERE id = ?",
      ),
      closeRunner: database.prepare<[number, number]>(
        "UPDATE skillbox_runners SET closed_at = ? WHERE id = ?",
      ),
    };
    // unref: a lease never keeps a process alive that has nothing else to do.
    this.renewal = setInterval(() => this.renewAndSweep(), Math.max(1, Math.floor(this.leaseMs / 3)));
    this.renewal.unref();
  }

  private readonly database: Database.Database;

  /**
   * Queues the `running` row; resolves with its rowid once it is committed. `inputHash` (see
   * `hashInput`) is stored for executions with an idempotency key.
   */
  start(
    row: ExecutionStart,
    inputJson: string | null,
    createdAt: number,
    extra?: StartExtras,
  ): Promise<number> {
    return this.batcher.start(row, inputJson, createdAt, extra);
  }

  /** Runs `work` in the next group commit; resolves with its result once committed. */
  write(id: string, work: () => void): Promise<number> {
    return this.batcher.transact(id, work);
  }

  /** Queues the final state; resolves (with its rowid) once it is committed. */
  finish(row: ExecutionFinish): Promise<number> {
    return this.batcher.finish(row);
  }

  /** Commits what the batcher holds now: a durable write that changes queued rows comes after it. */
  flushNow(): void {
    this.batcher.flushNow();
  }

  /** Stops renewing the lease, commits what is queued and forgets this runner. */
  async close(): Promise<void> {
    clearInterval(this.renewal);
    await this.batcher.flush();
    OPEN_RUNNERS.delete(this.runnerId);
    if (this.database.open) this.statements.closeRunner.run(Date.now(), this.runnerKey);
  }

  /** One execution by id, bodies included. */
  get(id: string): SkillExecution | undefined {
    const row = this.statements.byId.get(id);
    return row === undefined ? undefined : rowToExecution(row);
  }

  /**
   * Forgets execution `id`: its row and its events (a nested execution a distributed worker handed
   * over to the shared record), once its final row is committed: nothing of it is queued then.
   * Returns whether there was a row.
   */
  delete(id: string): boolean {
    return this.database.transaction(() => {
      const deleted = this.statements.deleteExecution.get(id);
      if (deleted === undefined) return false;
      this.statements.deleteEvents.run(deleted.created_at, id);
      return true;
    })();
  }

  /** The execution `owner` ran with idempotency key `key`, with its input hash, if any. */
  findByIdempotencyKey(owner: string, key: string): IdempotentExecution | undefined {
    const row = this.statements.byIdempotencyKey.get(owner, key);
    return row === undefined ? undefined : { execution: rowToExecution(row), inputHash: row.input_hash };
  }

  /** A page of full records, newest first (see {@link ExecutionFilters}). */
  list(filters: ExecutionFilters = {}): SkillExecution[] {
    return listExecutionRecords(this.database, filters);
  }

  /**
   * The page `list()` would return, as summaries: the bodies are cut in SQL (see
   * `SUMMARY_COLUMNS`), and the page stops before its JSON would cross `maxBytes`.
   */
  listSummaries(filters: ExecutionFilters & ExecutionSummaryOptions = {}): ExecutionSummary[] {
    return listExecutionSummaries(this.database, filters);
  }

  /** Recent per-skill statistics of `owner`'s executions of `names` (see `ExecutionStats`). */
  stats(owner: string, names: readonly string[], options: SkillStatsOptions = {}): SkillStatsResult {
    this.skillStats ??= new ExecutionStats(this.database);
    return this.skillStats.compute(owner, names, options);
  }

  /** `owner`'s executions per bucket of creation time, by status (see `ExecutionTimelineQuery`). */
  timeline(owner: string, options: ExecutionTimelineOptions = {}): ExecutionTimeline {
    this.timelineQuery ??= new ExecutionTimelineQuery(this.database);
    return this.timelineQuery.compute(owner, options);
  }

  /** Duration histograms of `owner`'s recent executions of `names` (see `DurationHistogramQuery`). */
  durations(
    owner: string,
    names: readonly string[],
    options: DurationHistogramOptions = {},
  ): DurationHistogram {
    this.histogramQuery ??= new DurationHistogramQuery(this.database);
    return this.histogramQuery.compute(owner, names, options);
  }

  /** How many executions match the filters (pagination ignored). */
  count(filters: ExecutionFilters = {}): number {
    return countExecutionRecords(this.database, filters);
  }

  /**
   * Marks rows left `pending`/`running` by dead runners `interrupted`: runners whose lease
   * expired, on any host, and — without waiting for the lease — runners of this host whose
   * process is gone. Runners open in this process are alive whatever their lease says. Runs on
   * start and on every lease renewal; returns how many rows changed.
   */
  markInterrupted(): number {
    const now = Date.now();
    let changed = 0;
    for (const runner of this.statements.suspectRunners.all(this.host, now)) {
      const cause = this.deathOf(runner, now);
      if (cause !== undefined) changed += this.recoverRunner(runner, cause, now);
    }
    return changed;
  }

  /**
   * If the runner of execution `id` is dead (see {@link markInterrupted}), marks its rows
   * `interrupted` now and returns true: what a repeat waiting on that execution checks, so its
   * wait ends without waiting for the next sweep. Does nothing when recovery is off.
   */
  recoverIfOrphaned(id: string): boolean {
    if (!this.recover) return false;
    const runner = this.statements.runnerOf.get(id);
    if (runner === undefined || runner.closed_at !== null) return false;
    const now = Date.now();
    const cause = this.deathOf(runner, now);
    return cause !== undefined && this.recoverRunner(runner, cause, now) > 0;
  }

  /** Why `runner` counts as dead, or undefined while it may be alive. */
  private deathOf(runner: RunnerRow, now: number): "lease" | "process" | undefined {
    if (OPEN_RUNNERS.has(runner.runner_id)) return undefined;
    if (runner.lease_expires_at !== null && runner.lease_expires_at < now) return "lease";
    // The fast path on this host: a gone process need not wait its lease out. Our own pid with a
    // runner id not open here means an earlier process that had our pid.
    if (runner.host === this.host && (runner.pid === process.pid || !isAlive(runner.pid))) return "process";
    return undefined;
  }

  private recoverRunner(runner: RunnerRow, cause: "lease" | "process", now: number): number {
    return this.database
      .transaction(() => {
        const claimed = this.statements.claimRunner.run(now, runner.id, cause === "process" ? 1 : 0, now);
        if (claimed.changes === 0) return 0;
        // Jobs it took from the queue first: their rows may predate the runner, so the id bound
        // below would miss them, and some go back to the queue instead.
        const requeuedOrInterrupted = this.jobs.recoverRunner(runner.id, now);
        return (
          requeuedOrInterrupted +
          this.statements.interruptRunner.run(now, uuidV7LowerBound(runner.started_at - 1), runner.id).changes
        );
      })
      .immediate();
  }

  /** The lease timer: renew ours, then (if recovering) sweep the dead runners of any host. */
  private renewAndSweep(): void {
    if (!this.database.open) {
      clearInterval(this.renewal);
      return;
    }
    try {
      const expiresAt = Date.now() + this.leaseMs;
      if (this.statements.renewLease.run(expiresAt, this.runnerKey).changes === 0) {
        // Another host took this runner for dead (its lease lapsed, say under a blocked event
        // loop) and interrupted its rows; the rows it writes from now on need a live lease.
        this.statements.reopenRunner.run(expiresAt, this.runnerKey);
        this.onLeaseLost?.();
      }
      if (this.recover) this.markInterrupted();
    } catch {
      // A locked or closing database: the next renewal tries again, well within the lease.
    }
  }
}

/**
 * How the audit trail's queries may read `since`: `seekById` (the default) also bounds the
 * primary key, which holds when every id was minted by the clock that stamped its row's
 * `created_at` (one host). The shared record stamps rows by the database clock and takes ids
 * from hosts whose clocks disagree: it reads `created_at` alone.
 */
export interface ExecutionQueryOptions {
  seekById?: boolean;
}

/** A page of full records of `database`, newest first: `list()` of the audit trail and the shared record. */
export function listExecutionRecords(
  database: Database.Database,
  filters: ExecutionFilters,
  options: ExecutionQueryOptions = {},
): SkillExecution[] {
  const { where, parameters } = buildWhere(filters, options);
  const { limit, offset } = pageOf(filters);
  const rows = database
    .prepare<unknown[], ExecutionRow>(
      `SELECT * FROM skill_executions ${where} ORDER BY rowid DESC LIMIT ? OFFSET ?`,
    )
    .all(...parameters, limit, offset);
  return rows.map(rowToExecution);
}

/** The page {@link listExecutionRecords} would return, as summaries (see `ExecutionStore.listSummaries`). */
export function listExecutionSummaries(
  database: Database.Database,
  filters: ExecutionFilters & ExecutionSummaryOptions,
  options: ExecutionQueryOptions = {},
): ExecutionSummary[] {
  const { previewLength, maxBytes } = resolveSummaryOptions(filters);
  const { where, parameters } = buildWhere(filters, options);
  const { limit, offset } = pageOf(filters);
  const rows = database
    .prepare<unknown[], ExecutionSummaryRow>(
      `SELECT ${SUMMARY_COLUMNS} FROM skill_executions ${where} ORDER BY rowid DESC LIMIT ? OFFSET ?`,
    )
    .iterate({ previewLength }, ...parameters, limit, offset);
  const summaries: ExecutionSummary[] = [];
  // "[" and "]", then each summary and its comma.
  let bytes = 2;
  for (const row of rows) {
    const summary = rowToSummary(row);
    const size = Buffer.byteLength(JSON.stringify(summary)) + (summaries.length === 0 ? 0 : 1);
    // Leaving the loop ends the statement: rows past the budget are never read.
    if (summaries.length > 0 && bytes + size > maxBytes) break;
    summaries.push(summary);
    bytes += size;
  }
  return summaries;
}

/** How many executions of `database` match the filters (pagination ignored). */
export function countExecutionRecords(
  database: Database.Database,
  filters: ExecutionFilters,
  options: ExecutionQueryOptions = {},
): number {
  const { where, parameters } = buildWhere(filters, options);
  return database
    .prepare<unknown[], number>(`SELECT COUNT(*) FROM skill_executions ${where}`)
    .pluck()
    .get(...parameters) as number;
}

/** `limit` (1–1000, default 50) and `offset` (from 0) of a page of `list()` or `listSummaries()`. */
function pageOf(filters: ExecutionFilters): { limit: number; offset: number } {
  return {
    limit: Math.min(Math.max(Math.trunc(filters.limit ?? 50), 1), MAX_PAGE),
    offset: Math.max(Math.trunc(filters.offset ?? 0), 0),
  };
}

function buildWhere(
  filters: ExecutionFilters,
  options: ExecutionQueryOptions,
): { where: string; parameters: unknown[] } {
  const clauses: string[] = [];
  const parameters: unknown[] = [];
  if (filters.owner !== undefined) {
    clauses.push("api_key_id = ?");
    parameters.push(filters.owner);
  }
  if (filters.skill !== undefined) {
    clauses.push("skill_name = ?");
    parameters.push(filters.skill);
  }
  if (filters.status !== undefined) {
    const statuses = Array.isArray(filters.status) ? filters.status : [filters.status];
    if (statuses.length === 0) return { where: "WHERE 0", parameters: [] };
    clauses.push(`status IN (${statuses.map(() => "?").join(", ")})`);
    parameters.push(...statuses);
  }
  if (filters.sessionId !== undefined) {
    clauses.push("session_id = ?");
    parameters.push(filters.sessionId);
  }
  if (filters.parentExecutionId !== undefined) {
    clauses.push("parent_execution_id = ?");
    parameters.push(filters.parentExecutionId);
  }
  const since = checkedInstant("listExecutions", "since", filters.since);
  if (since !== undefined && options.seekById !== false) {
    // The id bound lets SQLite seek in the (time-ordered) primary key; created_at is exact.
    clauses.push("id >= ?", "created_at >= ?");
    parameters.push(uuidV7LowerBound(since - 1), since);
  } else if (since !== undefined) {
    clauses.push("created_at >= ?");
    parameters.push(since);
  }
  const until = checkedInstant("listExecutions", "until", filters.until);
  if (until !== undefined) {
    // No id bound here: an id's time is never before its row's created_at but may be after it
    // (the id clock never goes back when the wall clock does), so it cannot bound from above.
    clauses.push("created_at < ?");
    parameters.push(until);
  }
  return { where: clauses.length === 0 ? "" : `WHERE ${clauses.join(" AND ")}`, parameters };
}
