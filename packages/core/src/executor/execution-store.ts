import { hostname } from "node:os";
import type Database from "better-sqlite3";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { ExecutionError, ExecutionStatus, SkillExecution } from "../types.js";
import { AuditBatcher, type ExecutionFinish, type ExecutionStart } from "./audit-batcher.js";

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
  /** Page size (default 50, at most 1000). */
  limit?: number;
  offset?: number;
}

interface ExecutionRow {
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
  created_at: number;
  finished_at: number | null;
}

const MAX_PAGE = 1000;

function rowToExecution(row: ExecutionRow): SkillExecution {
  const error: ExecutionError | null =
    row.error_code === null
      ? null
      : row.error_data === null
        ? { code: row.error_code, message: row.error_message ?? "" }
        : { code: row.error_code, message: row.error_message ?? "", data: JSON.parse(row.error_data) };
  return {
    id: row.id,
    skillId: row.skill_id,
    skillName: row.skill_name,
    skillVersion: row.skill_version,
    apiKeyId: row.api_key_id,
    sessionId: row.session_id,
    parentExecutionId: row.parent_execution_id,
    idempotencyKey: row.idempotency_key,
    input: row.input === null ? null : JSON.parse(row.input),
    output: row.output === null ? null : JSON.parse(row.output),
    status: row.status,
    error,
    attempts: row.attempts,
    duration: row.duration_ms,
    createdAt: new Date(row.created_at).toISOString(),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at).toISOString(),
  };
}

/** Runner ids of the stores open in this process: their rows are live whatever the pid says. */
const OPEN_RUNNERS = new Set<string>();

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
  private readonly runnerKey: number;
  private readonly statements;
  private readonly batcher: AuditBatcher;
  private readonly host = hostname();

  constructor(database: Database.Database, runnerId: string) {
    this.database = database;
    this.runnerId = runnerId;
    const runnerKey = Number(
      database
        .prepare("INSERT INTO skillbox_runners (runner_id, pid, host, started_at) VALUES (?, ?, ?, ?)")
        .run(runnerId, process.pid, this.host, Date.now()).lastInsertRowid,
    );
    this.runnerKey = runnerKey;
    OPEN_RUNNERS.add(runnerId);
    this.batcher = new AuditBatcher(database, runnerKey);
    this.statements = {
      byId: database.prepare<[string], ExecutionRow>("SELECT * FROM skill_executions WHERE id = ?"),
      byIdempotencyKey: database.prepare<[string, string], ExecutionRow>(
        "SELECT * FROM skill_executions WHERE api_key_id = ? AND idempotency_key = ?",
      ),
      unclosedRunners: database.prepare<
        [string],
        { id: number; runner_id: string; pid: number; started_at: number }
      >("SELECT id, runner_id, pid, started_at FROM skillbox_runners WHERE closed_at IS NULL AND host = ?"),
      // A runner's rows all have ids minted after it started, so the primary key bounds the scan.
      interruptRunner: database.prepare<[number, string, number]>(
        `UPDATE skill_executions SET status = 'interrupted', error_code = 'INTERRUPTED',
           error_message = 'The process running this execution stopped before it finished', finished_at = ?
         WHERE id >= ? AND runner = ? AND status IN ('pending', 'running')`,
      ),
      closeRunner: database.prepare<[number, number]>(
        "UPDATE skillbox_runners SET closed_at = ? WHERE id = ?",
      ),
    };
  }

  private readonly database: Database.Database;

  /** Queues the `running` row; resolves with its rowid once it is committed. */
  start(row: ExecutionStart, inputJson: string | null, createdAt: number): Promise<number> {
    return this.batcher.start(row, inputJson, createdAt);
  }

  /** Queues the final state; resolves once it is committed. */
  finish(row: ExecutionFinish): Promise<void> {
    return this.batcher.finish(row);
  }

  /** Resolves when everything queued so far is committed. */
  flush(): Promise<void> {
    return this.batcher.flush();
  }

  /** Commits what is queued and forgets this runner. */
  async close(): Promise<void> {
    await this.batcher.flush();
    OPEN_RUNNERS.delete(this.runnerId);
    if (this.database.open) this.statements.closeRunner.run(Date.now(), this.runnerKey);
  }

  get(id: string): SkillExecution | undefined {
    const row = this.statements.byId.get(id);
    return row === undefined ? undefined : rowToExecution(row);
  }

  findByIdempotencyKey(owner: string, key: string): SkillExecution | undefined {
    const row = this.statements.byIdempotencyKey.get(owner, key);
    return row === undefined ? undefined : rowToExecution(row);
  }

  list(filters: ExecutionFilters = {}): SkillExecution[] {
    const { where, parameters } = buildWhere(filters);
    const limit = Math.min(Math.max(Math.trunc(filters.limit ?? 50), 1), MAX_PAGE);
    const offset = Math.max(Math.trunc(filters.offset ?? 0), 0);
    const rows = this.database
      .prepare<unknown[], ExecutionRow>(
        `SELECT * FROM skill_executions ${where} ORDER BY rowid DESC LIMIT ? OFFSET ?`,
      )
      .all(...parameters, limit, offset);
    return rows.map(rowToExecution);
  }

  count(filters: ExecutionFilters = {}): number {
    const { where, parameters } = buildWhere(filters);
    return this.database
      .prepare<unknown[], number>(`SELECT COUNT(*) FROM skill_executions ${where}`)
      .pluck()
      .get(...parameters) as number;
  }

  /**
   * Marks rows left `pending`/`running` by processes on this host that no longer exist as
   * `interrupted`. Rows of live processes (other hosts sharing the file cannot be checked)
   * are left alone. Returns how many rows changed.
   */
  markInterrupted(): number {
    let changed = 0;
    for (const runner of this.statements.unclosedRunners.all(this.host)) {
      if (OPEN_RUNNERS.has(runner.runner_id)) continue;
      // Our own pid with a runner id not open here means an earlier process that had our pid.
      if (runner.pid !== process.pid && isAlive(runner.pid)) continue;
      changed += this.database
        .transaction(() => {
          const { changes } = this.statements.interruptRunner.run(
            Date.now(),
            uuidV7LowerBound(runner.started_at - 1),
            runner.id,
          );
          this.statements.closeRunner.run(Date.now(), runner.id);
          return changes;
        })
        .immediate();
    }
    return changed;
  }
}

/** The smallest UUIDv7 that can be minted at `milliseconds` (ids compare as fixed-width hex). */
function uuidV7LowerBound(milliseconds: number): string {
  const hex = Math.max(0, Math.trunc(milliseconds)).toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8)}-0000-0000-000000000000`;
}

function buildWhere(filters: ExecutionFilters): { where: string; parameters: unknown[] } {
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
  if (filters.since !== undefined) {
    const since = new Date(filters.since).getTime();
    if (Number.isNaN(since)) {
      throw new SkillboxError(
        "INPUT_INVALID",
        `listExecutions: \`since\` must be a date, got ${JSON.stringify(filters.since)}`,
      );
    }
    // The id bound lets SQLite seek in the (time-ordered) primary key; created_at is exact.
    clauses.push("id >= ?", "created_at >= ?");
    parameters.push(uuidV7LowerBound(since - 1), since);
  }
  return { where: clauses.length === 0 ? "" : `WHERE ${clauses.join(" AND ")}`, parameters };
}
