import type { JobRow } from "../executor/job-store.js";
import type { WorkerRecord } from "./execution-record-store.js";

/**
 * A row of `skill_execution_jobs` in the shared record (SQLite after migration 7, PostgreSQL):
 * the local job columns without the local runner's `claimed_by`, plus the claim columns.
 */
export interface RecordJobRow extends Omit<JobRow, "claimed_by"> {
  queue: string | null;
  content_hash: string | null;
  deadline_at: number | null;
  fence: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  enqueued_at: number | null;
  /** Times a lost lease put it back in the queue (see `MAX_LEASE_REQUEUES`). */
  requeues: number;
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

/** A worker as `listWorkers()` reports it; a heartbeat newer than the read counts as age 0. */
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
