import { formatTimestamp } from "../executor/format-timestamp.js";
import { type ExecutionApproval, isFinalExecutionStatus, type SkillExecution } from "../types.js";
import {
  type ApproveRecordOptions,
  type CancelRequestResult,
  type EndUnclaimedOptions,
  MAX_LEASE_REQUEUES,
  type RecoverExpiredOptions,
  type RecoveredExecution,
  type RequestCancelOptions,
} from "./execution-record-store.js";
import type { RecordJobRow } from "./record-rows.js";
import { endPastDeadline } from "./sqlite-claims.js";
import {
  appendStatus,
  endUnclaimedRow,
  jobSubjectOf,
  readExecution,
  type SqliteRecordContext,
  subjectOf,
} from "./sqlite-record-context.js";
import { databaseNow, type RecordExecutionRow } from "./sqlite-record-statements.js";

/**
 * Runs `change` with the execution row of `target.id` in one immediate transaction; undefined
 * (and nothing written) when there is no such row or `target.owner` is given and does not own it.
 */
function onOwnedRow<Result>(
  context: SqliteRecordContext,
  target: { id: string; owner?: string },
  change: (row: RecordExecutionRow) => Result | undefined,
): Result | undefined {
  return context.database
    .transaction(() => {
      const row = context.statements.execution.get(target.id);
      if (row === undefined || (target.owner !== undefined && row.api_key_id !== target.owner))
        return undefined;
      return change(row);
    })
    .immediate();
}

/**
 * See `ExecutionRecordStore.approve`. An approval past its deadline by the database clock is
 * not granted: it expires here, in the same transaction, as the recovery would expire it.
 */
export function approveExecution(
  context: SqliteRecordContext,
  options: ApproveRecordOptions,
): SkillExecution | undefined {
  const { statements } = context;
  return onOwnedRow(context, options, (row) => {
    const job = statements.job.get(options.id);
    if (row.status === "awaiting_approval" && job !== undefined && job.approval_expires_at !== null) {
      const now = databaseNow(statements);
      if (job.approval_expires_at <= now) {
        expireApproval(context, job, now);
        return undefined;
      }
    }
    const approved = statements.approveExecution.run(
      JSON.stringify(options.approval),
      options.auditedInputJson ?? null,
      options.id,
    );
    if (approved.changes === 0) return undefined;
    statements.approveJob.run(options.rawInputJson ?? null, options.id);
    appendStatus(context, subjectOf(row), "queued", databaseNow(statements));
    return readExecution(context, options.id);
  });
}

/** See `ExecutionRecordStore.endUnclaimed`. */
export function endUnclaimed(
  context: SqliteRecordContext,
  options: EndUnclaimedOptions,
): SkillExecution | undefined {
  const { statements } = context;
  return onOwnedRow(context, options, (row) => {
    const from = options.from.find((status) => status === row.status);
    if (from === undefined) return undefined;
    const ended = endUnclaimedRow(context, {
      subject: subjectOf(row),
      from,
      status: options.status,
      code: options.code,
      message: options.message,
      approvalJson: options.approval === undefined ? null : JSON.stringify(options.approval),
      now: databaseNow(statements),
    });
    return ended ? readExecution(context, options.id) : undefined;
  });
}

/**
 * See `ExecutionRecordStore.requestCancel`. A running execution's request is a row of
 * `skill_execution_cancels`: its worker hears of it through `subscribe` (which polls that table)
 * and through its next `renew`, whichever comes first.
 */
export function requestCancel(
  context: SqliteRecordContext,
  options: RequestCancelOptions,
): CancelRequestResult {
  const { statements } = context;
  const answer = onOwnedRow(context, options, (row): CancelRequestResult => {
    const now = databaseNow(statements);
    if (isFinalExecutionStatus(row.status)) {
      return { kind: "final", execution: readExecution(context, options.id)! };
    }
    if (row.status === "queued" || row.status === "awaiting_approval") {
      endUnclaimedRow(context, {
        subject: subjectOf(row),
        from: row.status,
        status: "cancelled",
        code: "CANCELLED",
        message: `${row.skill_name}@${row.skill_version} was cancelled before it ran${options.reason === null ? "" : `: ${options.reason}`}`,
        approvalJson: null,
        now,
      });
      return { kind: "ended", execution: readExecution(context, options.id)! };
    }
    statements.requestCancel.run(options.id, options.reason, now);
    return { kind: "requested", execution: readExecution(context, options.id)! };
  });
  return answer ?? { kind: "unknown" };
}

/** Events are kept this long for subscribers, then pruned (as the one-host executor keeps them). */
const EVENT_RETENTION_MS = 60 * 60 * 1000;

/**
 * See `ExecutionRecordStore.recoverExpired`. Only the shared record's claims have a lease owner:
 * the one-host executor's jobs are its runners' to recover. Also prunes old events, since in a
 * deployment of workers alone no one-host executor does.
 */
export function recoverExpired(
  context: SqliteRecordContext,
  options: RecoverExpiredOptions,
): RecoveredExecution[] {
  const limit = Math.max(0, Math.min(Math.trunc(options.limit), 10_000));
  if (!(limit > 0)) return [];
  const { database, statements } = context;
  return database
    .transaction(() => {
      const now = databaseNow(statements);
      const recovered: RecoveredExecution[] = [];
      for (const job of statements.expiredLeases.all(now, limit)) {
        const action = recoverLease(context, job, now);
        if (action !== undefined) recovered.push(describe(job, action));
      }
      for (const job of statements.expiredApprovals.all(now, limit)) {
        if (expireApproval(context, job, now)) recovered.push(describe(job, "expired"));
      }
      // Queued past the deadline and never claimed (no worker serves the queue): a claim would
      // end it so, but no claim comes.
      for (const job of statements.queuedPastDeadline.all(now, limit)) {
        const row = statements.execution.get(job.execution_id);
        if (
          row !== undefined &&
          job.deadline_at !== null &&
          endPastDeadline(context, row, job.deadline_at, now)
        ) {
          recovered.push(describe(job, "timed-out"));
        }
      }
      statements.pruneEvents.run(now - EVENT_RETENTION_MS);
      return recovered;
    })
    .immediate();
}

function describe(job: RecordJobRow, action: RecoveredExecution["action"]): RecoveredExecution {
  return { id: job.execution_id, action, queue: job.queue ?? "", contentHash: job.content_hash ?? "" };
}

function recoverLease(
  context: SqliteRecordContext,
  job: RecordJobRow,
  now: number,
): "requeued" | "interrupted" | undefined {
  const { statements } = context;
  const subject = jobSubjectOf(job);
  if (job.rerunnable === 1 && job.requeues < MAX_LEASE_REQUEUES) {
    statements.requeueJob.run(job.execution_id);
    if (statements.requeueExecution.run(job.execution_id).changes === 0) {
      statements.deleteJob.run(job.execution_id);
      return undefined;
    }
    appendStatus(context, subject, "queued", now);
    return "requeued";
  }
  const message =
    `The lease of worker ${job.lease_owner} on this execution expired before it finished ` +
    "(the worker stopped, was killed, was paused or lost the database); " +
    (job.rerunnable === 1
      ? `it was requeued ${job.requeues} times after lost leases already, so it is not requeued again`
      : "the skill does not allow a rerun");
  const interrupted = statements.interruptExecution.run(message, now, job.execution_id).changes > 0;
  statements.deleteJob.run(job.execution_id);
  statements.deleteCancel.run(job.execution_id);
  if (!interrupted) return undefined;
  appendStatus(context, subject, "interrupted", now);
  return "interrupted";
}

function expireApproval(context: SqliteRecordContext, job: RecordJobRow, now: number): boolean {
  const row = context.statements.execution.get(job.execution_id);
  if (row === undefined || row.status !== "awaiting_approval") return false;
  const approval = row.approval === null ? null : (JSON.parse(row.approval) as ExecutionApproval);
  const expired =
    approval === null ? null : { ...approval, decision: "expired" as const, decidedAt: formatTimestamp(now) };
  return endUnclaimedRow(context, {
    subject: subjectOf(row),
    from: "awaiting_approval",
    status: "rejected",
    code: "APPROVAL_EXPIRED",
    message: `${row.skill_name}@${row.skill_version} waited for approval past its deadline (${approval?.expiresAt ?? formatTimestamp(job.approval_expires_at ?? now)})`,
    approvalJson: expired === null ? null : JSON.stringify(expired),
    now,
  });
}
