import { hostname } from "node:os";
import type Database from "better-sqlite3";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { ExecutionError, ExecutionStatus, SkillExecution } from "../types.js";

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

type Pending =
  | { kind: "start"; row: ExecutionStart; resolve: () => void; reject: (error: unknown) => void }
  | { kind: "finish"; row: ExecutionFinish; resolve: () => void; reject: (error: unknown) => void };

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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The audit trail in `skill_executions`. Writes are group-committed: every start and finish
 * queued during one turn of the event loop is written in a single immediate transaction,
 * and each caller's promise settles only after that transaction commits. Under load this
 * turns thousands of commits into a few, without ever resolving an unwritten row.
 */
export class ExecutionStore {
  /** Identifies this store's process, so a later start can tell which `running` rows were orphaned. */
  readonly runnerId: string;
  private readonly statements;
  private queue: Pending[] = [];
  private flushScheduled = false;
  private readonly host = hostname();

  constructor(
    private readonly database: Database.Database,
    runnerId: string,
  ) {
    this.runnerId = runnerId;
    this.statements = {
      insert: database.prepare(
        `INSERT INTO skill_executions (id, skill_id, skill_name, skill_version, api_key_id, session_id,
           parent_execution_id, idempotency_key, input, status, attempts, created_at, runner_id, runner_pid, runner_host)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', 0, ?, ?, ?, ?)`,
      ),
      finish: database.prepare(
        `UPDATE skill_executions SET status = ?, output = ?, error_code = ?, error_message = ?, error_data = ?,
           attempts = ?, duration_ms = ?, finished_at = ? WHERE id = ?`,
      ),
      byId: database.prepare<[string], ExecutionRow>("SELECT * FROM skill_executions WHERE id = ?"),
      byIdempotencyKey: database.prepare<[string, string], ExecutionRow>(
        "SELECT * FROM skill_executions WHERE api_key_id = ? AND idempotency_key = ?",
      ),
      orphanRunners: database.prepare<[], { runner_id: string; runner_pid: number; runner_host: string }>(
        `SELECT DISTINCT runner_id, runner_pid, runner_host FROM skill_executions
         WHERE status IN ('pending', 'running')`,
      ),
      interruptRunner: database.prepare<[number, string]>(
        `UPDATE skill_executions SET status = 'interrupted', error_code = 'INTERRUPTED',
           error_message = 'The process running this execution stopped before it finished', finished_at = ?
         WHERE runner_id = ? AND status IN ('pending', 'running')`,
      ),
    };
  }

  /** Queues the `running` row; resolves once it is committed. */
  start(row: ExecutionStart): Promise<void> {
    return new Promise((resolve, reject) => this.enqueue({ kind: "start", row, resolve, reject }));
  }

  /** Queues the final state; resolves once it is committed. */
  finish(row: ExecutionFinish): Promise<void> {
    return new Promise((resolve, reject) => this.enqueue({ kind: "finish", row, resolve, reject }));
  }

  /** Waits until everything queued so far is committed. */
  async flush(): Promise<void> {
    while (this.queue.length > 0 || this.flushScheduled) {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
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
        `SELECT * FROM skill_executions ${where} ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`,
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
    for (const runner of this.statements.orphanRunners.all()) {
      if (runner.runner_id === this.runnerId || runner.runner_host !== this.host) continue;
      if (runner.runner_pid !== process.pid && isAlive(runner.runner_pid)) continue;
      changed += this.database
        .transaction(() => this.statements.interruptRunner.run(Date.now(), runner.runner_id).changes)
        .immediate();
    }
    return changed;
  }

  /** Marks this store's own unfinished rows `interrupted` (used on close). */
  interruptOwn(): number {
    return this.statements.interruptRunner.run(Date.now(), this.runnerId).changes;
  }

  private enqueue(item: Pending): void {
    this.queue.push(item);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.drain());
  }

  private drain(): void {
    this.flushScheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    try {
      this.writeBatch(batch);
      for (const item of batch) item.resolve();
    } catch {
      // One bad row (say, a duplicate idempotency key from another process) must not fail its
      // neighbours: write them one by one so only the offender is rejected.
      for (const item of batch) {
        try {
          this.writeBatch([item]);
          item.resolve();
        } catch (error) {
          item.reject(
            new SkillboxError(
              "DATABASE_ERROR",
              `Writing the audit row of execution ${item.row.id} failed: ${(error as Error).message}`,
              {
                cause: error,
              },
            ),
          );
        }
      }
    }
  }

  private writeBatch(batch: Pending[]): void {
    const pid = process.pid;
    const host = this.host;
    this.database
      .transaction(() => {
        for (const item of batch) {
          if (item.kind === "start") {
            const row = item.row;
            this.statements.insert.run(
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
              this.runnerId,
              pid,
              host,
            );
          } else {
            const row = item.row;
            this.statements.finish.run(
              row.status,
              row.outputJson,
              row.error?.code ?? null,
              row.error?.message ?? null,
              row.error?.data === undefined ? null : safeStringify(row.error.data),
              row.attempts,
              row.duration,
              row.finishedAt,
              row.id,
            );
          }
        }
      })
      .immediate();
  }
}

function safeStringify(value: unknown): string | null {
  try {
    return JSON.stringify(value) ?? null;
  } catch {
    return null;
  }
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
    clauses.push("created_at >= ?");
    parameters.push(since);
  }
  return { where: clauses.length === 0 ? "" : `WHERE ${clauses.join(" AND ")}`, parameters };
}
