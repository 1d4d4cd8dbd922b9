import type {
  ApproveRecordOptions,
  CancelRequestResult,
  EndUnclaimedOptions,
  RequestCancelOptions,
} from "@skillbox/core";
import { isFinalExecutionStatus, type SkillExecution } from "@skillbox/core";
import { type ExecutionRow, rowToExecution } from "@skillbox/core/internal";
import { DATABASE_NOW } from "./postgres-clock.js";
import { endExecution, lockJob } from "./postgres-ending.js";
import { appendStatus, notifyCancel } from "./postgres-events.js";
import { expireApproval } from "./postgres-recovery.js";
import { type PostgresSession, ROLLBACK } from "./postgres-session.js";

/** What `approve`'s transaction answers when it expired the approval instead (committed). */
const EXPIRED = Symbol("expired");

/**
 * Approves an execution awaiting approval: queued again (to be added to the queue), edited input
 * and all. An approval past its deadline by the database clock is not granted: it expires in the
 * same transaction, as the recovery would expire it.
 */
export async function approve(
  session: PostgresSession,
  options: ApproveRecordOptions,
): Promise<SkillExecution | undefined> {
  const row = await session.transaction(async (transaction) => {
    const job = await lockJob(transaction, options.id, {
      states: ["awaiting_approval"],
      owner: options.owner,
    });
    if (job === undefined) return ROLLBACK;
    const deadline = await transaction.one<{ passed: boolean }>(
      `SELECT ($1::bigint IS NOT NULL AND $1::bigint <= ${DATABASE_NOW}) AS passed`,
      [job.approval_expires_at],
    );
    if (deadline?.passed === true) {
      await expireApproval(transaction, job);
      return EXPIRED;
    }
    const approved = await transaction.one<ExecutionRow>(
      `UPDATE skill_executions SET status = 'queued', approval = $2, input = COALESCE($3, input)
       WHERE id = $1 AND status = 'awaiting_approval' RETURNING *`,
      [options.id, JSON.stringify(options.approval), options.auditedInputJson ?? null],
    );
    if (approved === undefined) return ROLLBACK;
    await transaction.run(
      `UPDATE skill_execution_jobs SET state = 'queued', input = COALESCE($2, input), approved = 1,
         approval_expires_at = NULL, lease_owner = NULL, lease_expires_at = NULL, enqueued_at = NULL
       WHERE execution_id = $1`,
      [options.id, options.rawInputJson ?? null],
    );
    await appendStatus(
      transaction,
      { id: job.execution_id, owner: job.api_key_id, skillName: job.skill_name },
      "queued",
    );
    return approved;
  });
  return row === undefined || row === EXPIRED ? undefined : rowToExecution(row);
}

/** Ends an execution nobody runs, from one of the states `from` allows. */
export async function endUnclaimed(
  session: PostgresSession,
  options: EndUnclaimedOptions,
): Promise<SkillExecution | undefined> {
  if (options.from.length === 0) return undefined;
  const row = await session.transaction(async (transaction) => {
    const job = await lockJob(transaction, options.id, { states: options.from, owner: options.owner });
    if (job === undefined) return ROLLBACK;
    return (await endExecution(transaction, job, options)) ?? ROLLBACK;
  });
  return row === undefined ? undefined : rowToExecution(row);
}

/**
 * Asks an execution to stop: one nobody runs ends `cancelled` now; a running one gets a stored
 * request (its worker reads it on its next heartbeat) and a notice; a final one stays as it is.
 */
export async function requestCancel(
  session: PostgresSession,
  options: RequestCancelOptions,
): Promise<CancelRequestResult> {
  const result = await session.transaction<CancelRequestResult>(async (transaction) => {
    const job = await lockJob(transaction, options.id);
    const current = await transaction.one<ExecutionRow>(
      "SELECT * FROM skill_executions WHERE id = $1 FOR UPDATE",
      [options.id],
    );
    if (current === undefined || (options.owner !== undefined && current.api_key_id !== options.owner)) {
      return { kind: "unknown" };
    }
    if (isFinalExecutionStatus(current.status)) return { kind: "final", execution: rowToExecution(current) };
    if (job !== undefined && (current.status === "queued" || current.status === "awaiting_approval")) {
      const ended = await endExecution(transaction, job, {
        from: [current.status],
        status: "cancelled",
        code: "CANCELLED",
        message: `${current.skill_name}@${current.skill_version} was cancelled before it ran${
          options.reason === null ? "" : `: ${options.reason}`
        }`,
      });
      if (ended !== undefined) return { kind: "ended", execution: rowToExecution(ended) };
    }
    await transaction.run(
      `INSERT INTO skill_execution_cancels (execution_id, reason, requested_at) VALUES ($1, $2, ${DATABASE_NOW})
       ON CONFLICT (execution_id) DO NOTHING`,
      [options.id, options.reason],
    );
    await notifyCancel(transaction, options.id);
    return { kind: "requested", execution: rowToExecution(current) };
  });
  return result ?? { kind: "unknown" };
}
