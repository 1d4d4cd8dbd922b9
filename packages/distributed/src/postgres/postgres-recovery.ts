import type { ExecutionApproval, RecoverExpiredOptions, RecoveredExecution } from "@skillbox/core";
import { MAX_LEASE_REQUEUES, type RecordJobRow } from "@skillbox/core/internal";
import { DATABASE_NOW } from "./postgres-clock.js";
import { dropJob, endExecution } from "./postgres-ending.js";
import { appendStatus } from "./postgres-events.js";
import { queueOf } from "./postgres-rows.js";
import type { PostgresSession, Queryable } from "./postgres-session.js";
import { boundedLimit } from "./postgres-submissions.js";

/** How long status and progress events stay (a reconnecting listener reads back at most this far). */
const EVENT_RETENTION_MS = 3_600_000;
/** Events one recovery deletes at most: pruning never holds a long transaction. */
const PRUNE_BATCH = 5000;

const INTERRUPTED_MESSAGE =
  "The worker running this execution lost its lease (it stopped, was killed, paused or lost the database) before it finished";

function recovered(job: RecordJobRow, action: RecoveredExecution["action"]): RecoveredExecution {
  return { id: job.execution_id, action, queue: queueOf(job), contentHash: job.content_hash ?? "" };
}

/** Requeues (rerunnable) or interrupts (any other) one running job whose lease expired; it is locked. */
async function recoverLease(
  transaction: Queryable,
  job: RecordJobRow,
): Promise<RecoveredExecution | undefined> {
  const subject = { id: job.execution_id, owner: job.api_key_id, skillName: job.skill_name };
  if (job.rerunnable === 1 && job.requeues < MAX_LEASE_REQUEUES) {
    // The run that lost its lease made an attempt (at least): the next one's ctx.attempt moves on.
    const requeued = await transaction.run(
      `UPDATE skill_executions SET status = 'queued', attempts = attempts + 1
       WHERE id = $1 AND status IN ('running', 'pending')`,
      [job.execution_id],
    );
    if (requeued > 0) {
      // fence + 1: the lost claim's fence is no longer current, whatever it writes later.
      await transaction.run(
        `UPDATE skill_execution_jobs SET state = 'queued', fence = fence + 1, lease_owner = NULL,
           lease_expires_at = NULL, enqueued_at = NULL, requeues = requeues + 1
         WHERE execution_id = $1`,
        [job.execution_id],
      );
      await appendStatus(transaction, subject, "queued");
      return recovered(job, "requeued");
    }
  } else {
    const interrupted = await transaction.run(
      `UPDATE skill_executions SET status = 'interrupted', error_code = 'INTERRUPTED', error_message = $2,
         error_data = NULL, finished_at = ${DATABASE_NOW}, attempts = attempts + 1
       WHERE id = $1 AND status IN ('running', 'pending')`,
      [
        job.execution_id,
        job.rerunnable === 1
          ? `${INTERRUPTED_MESSAGE}; it was requeued ${job.requeues} times after lost leases already, so it is not requeued again`
          : INTERRUPTED_MESSAGE,
      ],
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
export async function expireApproval(
  transaction: Queryable,
  job: RecordJobRow,
): Promise<RecoveredExecution | undefined> {
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

/** How a queued execution past its deadline ends, at its claim or in the recovery. */
export function pastDeadlineEnd(job: Pick<RecordJobRow, "skill_name" | "deadline_at">) {
  return {
    from: ["queued"] as const,
    status: "timeout" as const,
    code: "DEADLINE_EXCEEDED",
    message: `${job.skill_name} was queued past its deadline (${new Date(job.deadline_at ?? 0).toISOString()}) and never started`,
  };
}

/**
 * Recovers what nobody will finish, in one transaction: running jobs whose lease expired by the
 * database clock, then approvals past their deadline, then queued executions past theirs (at
 * most `limit` of each), then prunes
 * old events. `SKIP LOCKED`: hosts sweeping at once split the work instead of queueing on it,
 * and a job a worker is writing right now is left for the next sweep.
 */
export async function recoverExpired(
  session: PostgresSession,
  options: RecoverExpiredOptions,
): Promise<RecoveredExecution[]> {
  const limit = boundedLimit(options.limit);
  if (limit === 0) return [];
  const result = await session.transaction(async (transaction) => {
    const changes: RecoveredExecution[] = [];
    const leases = await transaction.rows<RecordJobRow>(
      `SELECT * FROM skill_execution_jobs
       WHERE lease_owner IS NOT NULL AND state = 'running' AND lease_expires_at < ${DATABASE_NOW}
       ORDER BY lease_expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    for (const job of leases) {
      const change = await recoverLease(transaction, job);
      if (change !== undefined) changes.push(change);
    }
    const approvals = await transaction.rows<RecordJobRow>(
      `SELECT * FROM skill_execution_jobs
       WHERE state = 'awaiting_approval' AND approval_expires_at IS NOT NULL AND approval_expires_at <= ${DATABASE_NOW}
       ORDER BY approval_expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    for (const job of approvals) {
      const change = await expireApproval(transaction, job);
      if (change !== undefined) changes.push(change);
    }
    // Queued past the deadline and never claimed (no worker serves the queue): a claim would
    // end it so, but no claim comes.
    const late = await transaction.rows<RecordJobRow>(
      `SELECT * FROM skill_execution_jobs
       WHERE state = 'queued' AND deadline_at IS NOT NULL AND deadline_at <= ${DATABASE_NOW}
       ORDER BY deadline_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    for (const job of late) {
      const ended = await endExecution(transaction, job, pastDeadlineEnd(job));
      if (ended !== undefined) changes.push(recovered(job, "timed-out"));
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
