import type { ExecutionApproval, RecoveredExecution } from "@skillbox/core";
import { DATABASE_NOW } from "./postgres-clock.js";
import { dropJob, endExecution } from "./postgres-ending.js";
import { appendStatus } from "./postgres-events.js";
import { type JobRow, queueOf } from "./postgres-rows.js";
import type { PostgresSession, Queryable } from "./postgres-session.js";
import { boundedLimit } from "./postgres-submissions.js";

/** How long status and progress events stay (a reconnecting listener reads back at most this far). */
const EVENT_RETENTION_MS = 3_600_000;
/** Events one recovery deletes at most: pruning never holds a long transaction. */
const PRUNE_BATCH = 5000;

const INTERRUPTED_MESSAGE =
  "The worker running this execution lost its lease (it stopped, paused or lost the database) before it finished";

function recovered(job: JobRow, action: RecoveredExecution["action"]): RecoveredExecution {
  return { id: job.execution_id, action, queue: queueOf(job), contentHash: job.content_hash ?? "" };
}

/** Requeues (rerunnable) or interrupts (any other) one running job whose lease expired; it is locked. */
async function recoverLease(transaction: Queryable, job: JobRow): Promise<RecoveredExecution | undefined> {
  const subject = { id: job.execution_id, owner: job.api_key_id, skillName: job.skill_name };
  if (job.rerunnable === 1) {
    const requeued = await transaction.run(
      "UPDATE skill_executions SET status = 'queued' WHERE id = $1 AND status IN ('running', 'pending')",
      [job.execution_id],
    );
    if (requeued > 0) {
      // fence + 1: the lost claim's fence is no longer current, whatever it writes later.
      await transaction.run(
        `UPDATE skill_execution_jobs SET state = 'queued', fence = fence + 1, lease_owner = NULL,
           lease_expires_at = NULL, enqueued_at = NULL
         WHERE execution_id = $1`,
        [job.execution_id],
      );
      await appendStatus(transaction, subject, "queued");
      return recovered(job, "requeued");
    }
  } else {
    const interrupted = await transaction.run(
      `UPDATE skill_executions SET status = 'interrupted', error_code = 'INTERRUPTED', error_message = $2,
         error_data = NULL, finished_at = ${DATABASE_NOW}
       WHERE id = $1 AND status IN ('running', 'pending')`,
      [job.execution_id, INTERRUPTED_MESSAGE],
    );
    if (interrupted > 0) {
      await dropJob(transaction, job.execution_id);
      await appendStatus(transaction, subject, "interrupted");
      return recovered(job, "interrupted");
    }
  }
  // The audit row ended some other way: the job is left over.
  await dropJob(transaction, job.execution_id);
  return undefined;
}

/** Ends one awaiting job whose approval deadline passed (`rejected`, APPROVAL_EXPIRED); it is locked. */
async function expireApproval(transaction: Queryable, job: JobRow): Promise<RecoveredExecution | undefined> {
  const row = await transaction.one<{ approval: string | null; skill_version: string; now: number }>(
    `SELECT approval, skill_version, ${DATABASE_NOW} AS now FROM skill_executions WHERE id = $1`,
    [job.execution_id],
  );
  if (row === undefined) return undefined;
  const asked = row.approval === null ? undefined : (JSON.parse(row.approval) as ExecutionApproval);
  const deadline = new Date(job.approval_expires_at ?? row.now).toISOString();
  const ended = await endExecution(transaction, job, {
    from: ["awaiting_approval"],
    status: "rejected",
    code: "APPROVAL_EXPIRED",
    message: `${job.skill_name}@${row.skill_version} waited for approval past its deadline (${deadline})`,
    approval:
      asked === undefined
        ? undefined
        : { ...asked, decision: "expired", decidedAt: new Date(row.now).toISOString() },
  });
  return ended === undefined ? undefined : recovered(job, "expired");
}

/**
 * Recovers what nobody will finish, in one transaction: running jobs whose lease expired by the
 * database clock, then approvals past their deadline (at most `limit` of each), then prunes
 * old events. `SKIP LOCKED`: hosts sweeping at once split the work instead of queueing on it,
 * and a job a worker is writing right now is left for the next sweep.
 */
export async function recoverExpired(
  session: PostgresSession,
  options: { limit: number },
): Promise<RecoveredExecution[]> {
  const limit = boundedLimit(options.limit);
  if (limit === 0) return [];
  const result = await session.transaction(async (transaction) => {
    const changes: RecoveredExecution[] = [];
    const leases = await transaction.rows<JobRow>(
      `SELECT * FROM skill_execution_jobs
       WHERE lease_owner IS NOT NULL AND state = 'running' AND lease_expires_at < ${DATABASE_NOW}
       ORDER BY lease_expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    for (const job of leases) {
      const change = await recoverLease(transaction, job);
      if (change !== undefined) changes.push(change);
    }
    const approvals = await transaction.rows<JobRow>(
      `SELECT * FROM skill_execution_jobs
       WHERE state = 'awaiting_approval' AND approval_expires_at IS NOT NULL AND approval_expires_at <= ${DATABASE_NOW}
       ORDER BY approval_expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    for (const job of approvals) {
      const change = await expireApproval(transaction, job);
      if (change !== undefined) changes.push(change);
    }
    await transaction.run(
      `DELETE FROM skill_execution_events WHERE seq IN (
         SELECT seq FROM skill_execution_events WHERE created_at < ${DATABASE_NOW} - $1 ORDER BY seq LIMIT $2)`,
      [EVENT_RETENTION_MS, PRUNE_BATCH],
    );
    return changes;
  });
  return result ?? [];
}
