import type { ExecutionApproval, ExecutionClaim, WorkerRecord } from "@skillbox/core";
import type { ExecutionRow } from "@skillbox/core/internal";

/** A row of `skill_execution_jobs` as `SELECT *` reads it (BIGINTs as numbers, see `RECORD_TYPES`). */
export interface JobRow {
  execution_id: string;
  api_key_id: string;
  skill_id: string;
  skill_name: string;
  input: string | null;
  options: string;
  state: "queued" | "awaiting_approval" | "running";
  queued_at: number;
  approval_expires_at: number | null;
  approved: number;
  rerunnable: number;
  queue: string | null;
  content_hash: string | null;
  deadline_at: number | null;
  fence: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  enqueued_at: number | null;
}

/** A row of `skillbox_workers`, with its age by the database clock. */
export interface WorkerRow {
  worker_id: string;
  host: string;
  pid: number;
  queues: string;
  skills: string;
  concurrency: number;
  running: number;
  started_at: number;
  last_heartbeat_at: number;
  age_ms: number;
}

/** The queue a job goes to: `default` for a job written without one. */
export function queueOf(job: Pick<JobRow, "queue">): string {
  return job.queue ?? "default";
}

/** What a claim hands the worker: the job (raw input, lease, fence) and its audit row. */
export function claimOf(
  job: JobRow,
  execution: ExecutionRow & { content_hash: string | null },
): ExecutionClaim {
  return {
    executionId: job.execution_id,
    fence: job.fence,
    workerId: job.lease_owner ?? "",
    leaseExpiresAt: job.lease_expires_at ?? 0,
    skillId: execution.skill_id,
    skillName: execution.skill_name,
    skillVersion: execution.skill_version,
    contentHash: job.content_hash ?? execution.content_hash ?? "",
    apiKeyId: execution.api_key_id,
    sessionId: execution.session_id,
    parentExecutionId: execution.parent_execution_id,
    idempotencyKey: execution.idempotency_key,
    rawInputJson: job.input,
    optionsJson: job.options,
    deadlineAt: job.deadline_at,
    attempts: execution.attempts,
    approval: execution.approval === null ? null : (JSON.parse(execution.approval) as ExecutionApproval),
    createdAt: execution.created_at,
    rerunnable: job.rerunnable === 1,
  };
}

/** A worker as `listWorkers()` reports it. */
export function workerOf(row: WorkerRow): WorkerRecord {
  return {
    workerId: row.worker_id,
    host: row.host,
    pid: row.pid,
    queues: JSON.parse(row.queues) as string[],
    skills: JSON.parse(row.skills) as WorkerRecord["skills"],
    concurrency: row.concurrency,
    running: row.running,
    startedAt: row.started_at,
    lastHeartbeatAt: row.last_heartbeat_at,
    heartbeatAgeMs: Math.max(0, row.age_ms),
  };
}

/**
 * The columns of the summary query in PostgreSQL: SQLite's `SUMMARY_COLUMNS` with `$n` for the
 * preview length. `substr` builds only the prefix and `octet_length` reads the size: a huge body
 * never travels to this process.
 */
export function summaryColumns(previewParameter: string): string {
  return `id, skill_id, skill_name, skill_version, api_key_id, session_id, parent_execution_id, idempotency_key,
    substr(input, 1, ${previewParameter}) AS input_preview, octet_length(input) AS input_bytes,
    substr(output, 1, ${previewParameter}) AS output_preview, octet_length(output) AS output_bytes,
    status, error_code,
    substr(error_message, 1, ${previewParameter}) AS error_message_preview,
    octet_length(error_message) AS error_message_bytes,
    attempts, duration_ms, progress, approval, created_at, finished_at, trace_id, span_id`;
}
