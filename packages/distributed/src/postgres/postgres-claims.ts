import type {
  ClaimOptions,
  ClaimResult,
  ClaimToken,
  FinalOutcome,
  PauseOptions,
  RenewResult,
} from "@skillbox/core";
import {
  type ExecutionApproval,
  type ExecutionStatus,
  isFinalExecutionStatus,
  SkillboxError,
} from "@skillbox/core";
import { type ExecutionRow, type RecordJobRow, rowToExecution } from "@skillbox/core/internal";
import { DATABASE_NOW } from "./postgres-clock.js";
import { endExecution, lockClaim, lockJob } from "./postgres-ending.js";
import { appendProgress, appendStatus } from "./postgres-events.js";
import { pastDeadlineEnd } from "./postgres-recovery.js";
import { claimOf } from "./postgres-rows.js";
import { type PostgresSession, ROLLBACK } from "./postgres-session.js";

/** Longest lease a claim or renewal takes (a day): a typo of a few zeros must not pin a job for years. */
const MAX_LEASE_MS = 86_400_000;

function checkedLeaseMs(leaseMs: number): number {
  if (!Number.isFinite(leaseMs) || leaseMs < 1 || leaseMs > MAX_LEASE_MS) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `PostgresRecordStore: \`leaseMs\` must be 1 to ${MAX_LEASE_MS} ms, got ${leaseMs}`,
    );
  }
  return Math.trunc(leaseMs);
}

function subjectOf(job: Pick<RecordJobRow, "execution_id" | "api_key_id" | "skill_name">) {
  return { id: job.execution_id, owner: job.api_key_id, skillName: job.skill_name };
}

/**
 * Claims a queued execution (compare-and-set on its job: `queued` → `running`, fence + 1, a
 * lease on the database clock), or ends it when its deadline passed or someone asked to cancel.
 * Of two claims at once one waits on the job's row lock and then finds it no longer `queued`.
 */
export async function claim(session: PostgresSession, options: ClaimOptions): Promise<ClaimResult> {
  const leaseMs = checkedLeaseMs(options.leaseMs);
  const result = await session.transaction<ClaimResult>(async (transaction) => {
    const job = await lockJob(transaction, options.executionId, { states: ["queued"] });
    if (job === undefined) {
      const row = await transaction.one<{ status: ExecutionStatus }>(
        "SELECT status FROM skill_executions WHERE id = $1",
        [options.executionId],
      );
      return { kind: "unavailable", status: row?.status ?? null };
    }
    const gate = await transaction.one<{
      past_deadline: boolean;
      cancel_reason: string | null;
      cancelled: boolean;
    }>(
      `SELECT ($1::bigint IS NOT NULL AND $1::bigint <= ${DATABASE_NOW}) AS past_deadline,
         c.reason AS cancel_reason, c.execution_id IS NOT NULL AS cancelled
       FROM (SELECT 1) AS one LEFT JOIN skill_execution_cancels c ON c.execution_id = $2`,
      [job.deadline_at, job.execution_id],
    );
    if (gate?.past_deadline === true || gate?.cancelled === true) {
      const ended = await endExecution(
        transaction,
        job,
        gate.past_deadline
          ? pastDeadlineEnd(job)
          : {
              from: ["queued"],
              status: "cancelled",
              code: "CANCELLED",
              message: `${job.skill_name} was cancelled before it ran${gate.cancel_reason === null ? "" : `: ${gate.cancel_reason}`}`,
            },
      );
      if (ended !== undefined) return { kind: "ended", execution: rowToExecution(ended) };
    }
    const execution = await transaction.one<ExecutionRow & { content_hash: string | null }>(
      "UPDATE skill_executions SET status = 'running' WHERE id = $1 AND status = 'queued' RETURNING *",
      [job.execution_id],
    );
    if (execution === undefined) {
      // The audit row is not queued (ended by a writer that left the job): the job has no use.
      await transaction.run("DELETE FROM skill_execution_jobs WHERE execution_id = $1", [job.execution_id]);
      const row = await transaction.one<{ status: ExecutionStatus }>(
        "SELECT status FROM skill_executions WHERE id = $1",
        [job.execution_id],
      );
      return { kind: "unavailable", status: row?.status ?? null };
    }
    const claimed = await transaction.one<RecordJobRow>(
      `UPDATE skill_execution_jobs SET state = 'running', fence = fence + 1, lease_owner = $2,
         lease_expires_at = ${DATABASE_NOW} + $3
       WHERE execution_id = $1 AND state = 'queued' RETURNING *`,
      [job.execution_id, options.workerId, leaseMs],
    );
    if (claimed === undefined) return ROLLBACK;
    await appendStatus(transaction, subjectOf(job), "running");
    return { kind: "claimed", claim: claimOf(claimed, execution) };
  });
  return result ?? { kind: "unavailable", status: null };
}

/** Extends the lease of a current claim and reads its cancel request. */
export async function renew(
  session: PostgresSession,
  token: ClaimToken,
  leaseMs: number,
): Promise<RenewResult> {
  const checked = checkedLeaseMs(leaseMs);
  const row = await session.one<{ lease_expires_at: number; reason: string | null; requested: boolean }>(
    `WITH renewed AS (
       UPDATE skill_execution_jobs SET lease_expires_at = ${DATABASE_NOW} + $3
       WHERE execution_id = $1 AND fence = $2 AND state = 'running' RETURNING execution_id, lease_expires_at)
     SELECT renewed.lease_expires_at, c.reason, c.execution_id IS NOT NULL AS requested
     FROM renewed LEFT JOIN skill_execution_cancels c ON c.execution_id = renewed.execution_id`,
    [token.executionId, token.fence, checked],
  );
  if (row === undefined)
    return { held: false, leaseExpiresAt: null, cancelRequested: false, cancelReason: null };
  return {
    held: true,
    leaseExpiresAt: row.lease_expires_at,
    cancelRequested: row.requested,
    cancelReason: row.reason,
  };
}

/** Commits the final state under the claim: audit row, job and cancel request gone, event told. */
export async function finish(
  session: PostgresSession,
  token: ClaimToken,
  outcome: FinalOutcome,
): Promise<boolean> {
  if (!isFinalExecutionStatus(outcome.status)) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `PostgresRecordStore.finish: \`${outcome.status}\` is not a final status`,
    );
  }
  const done = await session.transaction(async (transaction) => {
    const job = await lockClaim(transaction, token);
    if (job === undefined) return ROLLBACK;
    const changed = await transaction.run(
      `UPDATE skill_executions SET status = $2, output = $3, error_code = $4, error_message = $5, error_data = $6,
         attempts = $7, duration_ms = $8, finished_at = ${DATABASE_NOW}, trace_id = $9, span_id = $10
       WHERE id = $1 AND status IN ('running', 'pending')`,
      [
        token.executionId,
        outcome.status,
        outcome.outputJson,
        outcome.error?.code ?? null,
        outcome.error?.message ?? null,
        outcome.error?.dataJson ?? null,
        outcome.attempts,
        outcome.durationMs,
        outcome.traceId,
        outcome.spanId,
      ],
    );
    if (changed === 0) return ROLLBACK;
    await transaction.run("DELETE FROM skill_execution_jobs WHERE execution_id = $1", [token.executionId]);
    await transaction.run("DELETE FROM skill_execution_cancels WHERE execution_id = $1", [token.executionId]);
    await appendStatus(transaction, subjectOf(job), outcome.status);
    return true;
  });
  return done === true;
}

/** Stores the latest progress under the claim and tells subscribers. */
export async function recordProgress(
  session: PostgresSession,
  token: ClaimToken,
  progressJson: string,
): Promise<boolean> {
  const done = await session.transaction(async (transaction) => {
    const job = await lockClaim(transaction, token);
    if (job === undefined) return ROLLBACK;
    const changed = await transaction.run(
      "UPDATE skill_executions SET progress = $2 WHERE id = $1 AND status IN ('running', 'pending')",
      [token.executionId, progressJson],
    );
    if (changed === 0) return ROLLBACK;
    await appendProgress(transaction, subjectOf(job), progressJson);
    return true;
  });
  return done === true;
}

/** A pause's `approvalTimeoutMs`: null, or a positive number of ms; else `INPUT_INVALID`. */
function checkedApprovalTimeoutMs(timeoutMs: number | null): number | null {
  if (timeoutMs === null) return null;
  if (typeof timeoutMs !== "number" || !(timeoutMs > 0 && Number.isFinite(timeoutMs))) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `PostgresRecordStore.pause: \`approvalTimeoutMs\` must be a positive number of ms or null, got ${JSON.stringify(timeoutMs)}`,
    );
  }
  return Math.ceil(timeoutMs);
}

/**
 * Stops a claimed execution at `awaiting_approval`; the job keeps its raw input for the run
 * after. The approval's times are the database clock's, not the worker's.
 */
export async function pause(
  session: PostgresSession,
  token: ClaimToken,
  options: PauseOptions,
): Promise<boolean> {
  const timeoutMs = checkedApprovalTimeoutMs(options.approvalTimeoutMs);
  const done = await session.transaction(async (transaction) => {
    const job = await lockClaim(transaction, token);
    if (job === undefined) return ROLLBACK;
    const now = (await transaction.one<{ now: number }>(`SELECT ${DATABASE_NOW} AS now`))!.now;
    const expiresAt = timeoutMs === null ? null : now + timeoutMs;
    const approval: ExecutionApproval = {
      ...options.approval,
      requestedAt: new Date(now).toISOString(),
      expiresAt: expiresAt === null ? null : new Date(expiresAt).toISOString(),
    };
    const changed = await transaction.run(
      `UPDATE skill_executions SET status = 'awaiting_approval', approval = $2, attempts = $3
       WHERE id = $1 AND status IN ('running', 'pending')`,
      [token.executionId, JSON.stringify(approval), options.attempts],
    );
    if (changed === 0) return ROLLBACK;
    await transaction.run(
      `UPDATE skill_execution_jobs SET state = 'awaiting_approval', approval_expires_at = $2, approved = 0,
         lease_owner = NULL, lease_expires_at = NULL, enqueued_at = NULL
       WHERE execution_id = $1`,
      [token.executionId, expiresAt],
    );
    await appendStatus(transaction, subjectOf(job), "awaiting_approval");
    return true;
  });
  return done === true;
}
