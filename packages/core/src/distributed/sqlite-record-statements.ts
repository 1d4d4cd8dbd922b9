import type Database from "better-sqlite3";
import type { ExecutionRow } from "../executor/execution-store.js";
import type { StoredEventRow } from "../executor/job-store.js";
import type { ExecutionStatus } from "../types.js";
import type { RecordJobRow, WorkerRow } from "./record-rows.js";

/**
 * The database clock in SQLite, in ms since the epoch (`julianday` counts days; 2440587.5 is
 * the epoch's). Every process on the file reads one clock: the machine's, through SQLite.
 */
const SQLITE_NOW = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";

/** The runner row every execution of the shared record names (made by migration 7). */
export const RECORD_STORE_RUNNER_ID = "skillbox:record-store";

/** A row of `skill_executions` with the columns the shared record adds. */
export interface RecordExecutionRow extends ExecutionRow {
  input_hash: string | null;
  content_hash: string | null;
}

type Statement<Bound extends unknown[] = unknown[], Row = unknown> = Database.Statement<Bound, Row>;

/** The statements of the shared record, prepared once per store. */
export type RecordStatements = ReturnType<typeof prepareRecordStatements>;

/** The database clock now (see {@link SQLITE_NOW}). */
export function databaseNow(statements: RecordStatements): number {
  return (statements.now.get() as { now: number }).now;
}

/** Prepares every statement the SQLite record store runs. */
export function prepareRecordStatements(database: Database.Database) {
  // Each typed through the local alias, which the declaration of the statements can name (the
  // type better-sqlite3 infers cannot be); no statement plucks, for the same reason.
  return {
    now: database.prepare(`SELECT ${SQLITE_NOW} AS now`) as Statement<[], { now: number }>,
    runnerKey: database.prepare("SELECT id FROM skillbox_runners WHERE runner_id = ?") as Statement<
      [string],
      { id: number }
    >,
    execution: database.prepare("SELECT * FROM skill_executions WHERE id = ?") as Statement<
      [string],
      RecordExecutionRow
    >,
    byIdempotencyKey: database.prepare(
      "SELECT * FROM skill_executions WHERE api_key_id = ? AND idempotency_key = ?",
    ) as Statement<[string, string], RecordExecutionRow>,
    insertExecution: database.prepare(
      `INSERT INTO skill_executions (id, skill_id, skill_name, skill_version, api_key_id, session_id,
         parent_execution_id, idempotency_key, input, input_hash, status, attempts, created_at, runner, content_hash)
       VALUES (@id, @skillId, @skillName, @skillVersion, @apiKeyId, @sessionId, @parentExecutionId,
         @idempotencyKey, @auditedInputJson, @inputHash, 'queued', 0, @now, @runner, @contentHash)`,
    ) as Statement,
    // A nested execution that ended on a worker, as its audit row stood there (see `recordNested`).
    insertNested: database.prepare(
      `INSERT INTO skill_executions (id, skill_id, skill_name, skill_version, api_key_id, session_id,
         parent_execution_id, idempotency_key, input, output, status, error_code, error_message, error_data,
         attempts, duration_ms, progress, approval, created_at, finished_at, runner, trace_id, span_id, content_hash)
       VALUES (@id, @skillId, @skillName, @skillVersion, @apiKeyId, @sessionId, @parentExecutionId,
         @idempotencyKey, @inputJson, @outputJson, @status, @errorCode, @errorMessage, @errorData, @attempts,
         @durationMs, @progressJson, @approvalJson, @createdAt, @finishedAt, @runner, @traceId, @spanId, @contentHash)
       ON CONFLICT (id) DO NOTHING`,
    ) as Statement,
    insertJob: database.prepare(
      `INSERT INTO skill_execution_jobs (execution_id, api_key_id, skill_id, skill_name, input, options, state,
         queued_at, approved, rerunnable, queue, content_hash, deadline_at, fence)
       VALUES (@id, @apiKeyId, @skillId, @skillName, @rawInputJson, @optionsJson, 'queued', @now, 0,
         @rerunnable, @queue, @contentHash, @deadlineAt, 0)`,
    ) as Statement,
    insertEvent: database.prepare(
      `INSERT INTO skill_execution_events (execution_id, api_key_id, skill_name, type, data, runner, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ) as Statement<[string, string, string, string, string, number, number]>,
    markEnqueued: database.prepare(
      `UPDATE skill_execution_jobs SET enqueued_at = ?
       WHERE execution_id = ? AND state = 'queued' AND queue IS NOT NULL`,
    ) as Statement<[number, string]>,
    // Never enqueued since last queued (NULL sorts first), then the longest ago; rowid keeps
    // submission order among equals and comes with the index.
    staleQueued: database.prepare(
      `SELECT execution_id AS id, queue, content_hash FROM skill_execution_jobs
       WHERE state = 'queued' AND queue IS NOT NULL AND (enqueued_at IS NULL OR enqueued_at <= ?)
       ORDER BY enqueued_at, rowid LIMIT ?`,
    ) as Statement<[number, number], { id: string; queue: string; content_hash: string | null }>,
    job: database.prepare("SELECT * FROM skill_execution_jobs WHERE execution_id = ?") as Statement<
      [string],
      RecordJobRow
    >,
    dispatchTarget: database.prepare(
      "SELECT queue, content_hash FROM skill_execution_jobs WHERE execution_id = ? AND queue IS NOT NULL",
    ) as Statement<[string], { queue: string; content_hash: string | null }>,
    // Only the shared record's jobs: a one-host job (queue NULL) is its dispatcher's.
    claimJob: database.prepare(
      `UPDATE skill_execution_jobs SET state = 'running', fence = fence + 1, lease_owner = ?, lease_expires_at = ?
       WHERE execution_id = ? AND state = 'queued' AND queue IS NOT NULL
       RETURNING *`,
    ) as Statement<[string, number, string], RecordJobRow>,
    claimExecution: database.prepare(
      "UPDATE skill_executions SET status = 'running' WHERE id = ? AND status = 'queued' RETURNING *",
    ) as Statement<[string], RecordExecutionRow>,
    heldJob: database.prepare(
      `SELECT * FROM skill_execution_jobs
       WHERE execution_id = ? AND fence = ? AND state = 'running' AND lease_owner IS NOT NULL`,
    ) as Statement<[string, number], RecordJobRow>,
    renewLease: database.prepare(
      "UPDATE skill_execution_jobs SET lease_expires_at = ? WHERE execution_id = ? AND fence = ?",
    ) as Statement<[number, string, number]>,
    cancelOf: database.prepare(
      "SELECT reason FROM skill_execution_cancels WHERE execution_id = ?",
    ) as Statement<[string], { reason: string | null }>,
    finishExecution: database.prepare(
      `UPDATE skill_executions SET status = @status, output = @outputJson, error_code = @errorCode,
         error_message = @errorMessage, error_data = @errorData, attempts = @attempts, duration_ms = @durationMs,
         finished_at = @now, trace_id = @traceId, span_id = @spanId
       WHERE id = @id AND status = 'running'`,
    ) as Statement,
    setProgress: database.prepare(
      "UPDATE skill_executions SET progress = ? WHERE id = ? AND status = 'running'",
    ) as Statement<[string, string]>,
    pauseExecution: database.prepare(
      `UPDATE skill_executions SET status = 'awaiting_approval', approval = ?, attempts = ?
       WHERE id = ? AND status = 'running'`,
    ) as Statement<[string, number, string]>,
    pauseJob: database.prepare(
      `UPDATE skill_execution_jobs SET state = 'awaiting_approval', approval_expires_at = ?, approved = 0,
         lease_owner = NULL, lease_expires_at = NULL
       WHERE execution_id = ? AND fence = ?`,
    ) as Statement<[number | null, string, number]>,
    approveExecution: database.prepare(
      `UPDATE skill_executions SET status = 'queued', approval = ?, input = COALESCE(?, input)
       WHERE id = ? AND status = 'awaiting_approval'`,
    ) as Statement<[string, string | null, string]>,
    // Back in the queue, not enqueued yet: the sweeper adds it if the deciding host does not.
    approveJob: database.prepare(
      `UPDATE skill_execution_jobs SET state = 'queued', input = COALESCE(?, input), approved = 1,
         approval_expires_at = NULL, claimed_by = NULL, enqueued_at = NULL
       WHERE execution_id = ? AND state = 'awaiting_approval'`,
    ) as Statement<[string | null, string]>,
    endExecution: database.prepare(
      `UPDATE skill_executions SET status = ?, error_code = ?, error_message = ?, approval = COALESCE(?, approval),
         finished_at = ?, duration_ms = COALESCE(duration_ms, 0)
       WHERE id = ? AND status = ?`,
    ) as Statement<[ExecutionStatus, string, string, string | null, number, string, string]>,
    deleteJob: database.prepare("DELETE FROM skill_execution_jobs WHERE execution_id = ?") as Statement<
      [string]
    >,
    deleteCancel: database.prepare("DELETE FROM skill_execution_cancels WHERE execution_id = ?") as Statement<
      [string]
    >,
    requestCancel: database.prepare(
      `INSERT INTO skill_execution_cancels (execution_id, reason, requested_at) VALUES (?, ?, ?)
       ON CONFLICT (execution_id) DO NOTHING`,
    ) as Statement<[string, string | null, number]>,
    cancels: database.prepare(
      "SELECT execution_id, requested_at FROM skill_execution_cancels LIMIT 1000",
    ) as Statement<[], { execution_id: string; requested_at: number }>,
    expiredLeases: database.prepare(
      `SELECT * FROM skill_execution_jobs
       WHERE lease_owner IS NOT NULL AND lease_expires_at < ? AND state = 'running'
       ORDER BY lease_expires_at LIMIT ?`,
    ) as Statement<[number, number], RecordJobRow>,
    requeueJob: database.prepare(
      `UPDATE skill_execution_jobs SET state = 'queued', fence = fence + 1, lease_owner = NULL,
         lease_expires_at = NULL, enqueued_at = NULL, requeues = requeues + 1
       WHERE execution_id = ?`,
    ) as Statement<[string]>,
    // The run that lost its lease made an attempt (at least): the next one's ctx.attempt moves on.
    requeueExecution: database.prepare(
      "UPDATE skill_executions SET status = 'queued', attempts = attempts + 1 WHERE id = ? AND status = 'running'",
    ) as Statement<[string]>,
    interruptExecution: database.prepare(
      `UPDATE skill_executions SET status = 'interrupted', error_code = 'INTERRUPTED', error_message = ?,
         finished_at = ?, attempts = attempts + 1
       WHERE id = ? AND status = 'running'`,
    ) as Statement<[string, number, string]>,
    queuedPastDeadline: database.prepare(
      `SELECT * FROM skill_execution_jobs
       WHERE state = 'queued' AND queue IS NOT NULL AND deadline_at IS NOT NULL AND deadline_at <= ?
       ORDER BY deadline_at LIMIT ?`,
    ) as Statement<[number, number], RecordJobRow>,
    expiredApprovals: database.prepare(
      `SELECT * FROM skill_execution_jobs
       WHERE state = 'awaiting_approval' AND approval_expires_at IS NOT NULL AND approval_expires_at <= ?
         AND queue IS NOT NULL
       LIMIT ?`,
    ) as Statement<[number, number], RecordJobRow>,
    upsertWorker: database.prepare(
      `INSERT INTO skillbox_workers (worker_id, host, pid, queues, skills, concurrency, running, started_at,
         last_heartbeat_at)
       VALUES (@workerId, @host, @pid, @queues, @skills, @concurrency, @running, @startedAt, @now)
       ON CONFLICT (worker_id) DO UPDATE SET host = excluded.host, pid = excluded.pid, queues = excluded.queues,
         skills = excluded.skills, concurrency = excluded.concurrency, running = excluded.running,
         started_at = excluded.started_at, last_heartbeat_at = excluded.last_heartbeat_at`,
    ) as Statement,
    deleteWorker: database.prepare("DELETE FROM skillbox_workers WHERE worker_id = ?") as Statement<[string]>,
    workers: database.prepare(
      `SELECT *, @now - last_heartbeat_at AS age_ms FROM skillbox_workers WHERE last_heartbeat_at >= @since
       ORDER BY last_heartbeat_at DESC, worker_id LIMIT 1000`,
    ) as Statement<[{ now: number; since: number }], WorkerRow>,
    lastEventSeq: database.prepare(
      "SELECT COALESCE(MAX(seq), 0) AS seq FROM skill_execution_events",
    ) as Statement<[], { seq: number }>,
    eventsAfter: database.prepare(
      "SELECT * FROM skill_execution_events WHERE seq > ? ORDER BY seq LIMIT ?",
    ) as Statement<[number, number], StoredEventRow>,
    // Bounded, so one sweep never holds the write lock for long.
    pruneEvents: database.prepare(
      `DELETE FROM skill_execution_events WHERE seq IN (
         SELECT seq FROM skill_execution_events WHERE created_at < ? LIMIT 1000)`,
    ) as Statement<[number]>,
  };
}
