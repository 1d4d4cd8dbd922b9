import { SkillboxError } from "../errors/skillbox-error.js";
import { formatTimestamp } from "../executor/format-timestamp.js";
import { type ExecutionApproval, isFinalExecutionStatus } from "../types.js";
import type {
  ClaimOptions,
  ClaimResult,
  ClaimToken,
  ExecutionClaim,
  FinalOutcome,
  PauseOptions,
  RenewResult,
} from "./execution-record-store.js";
import type { RecordJobRow } from "./record-rows.js";
import {
  appendStatus,
  endUnclaimedRow,
  jobSubjectOf,
  readExecution,
  type SqliteRecordContext,
  subjectOf,
} from "./sqlite-record-context.js";
import { databaseNow, type RecordExecutionRow } from "./sqlite-record-statements.js";

/** Longest lease a claim may ask for (a day): a longer one would hide a dead worker for that long. */
const MAX_LEASE_MS = 24 * 60 * 60 * 1000;

function checkedLeaseMs(method: string, leaseMs: number): number {
  if (typeof leaseMs !== "number" || !(leaseMs >= 1 && leaseMs <= MAX_LEASE_MS)) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `${method}: \`leaseMs\` must be a number of milliseconds from 1 to ${MAX_LEASE_MS}, got ${JSON.stringify(leaseMs)}`,
    );
  }
  return Math.ceil(leaseMs);
}

/** A pause's `approvalTimeoutMs`: null, or a positive number of ms; else `INPUT_INVALID`. */
function checkedApprovalTimeoutMs(timeoutMs: number | null): number | null {
  if (timeoutMs === null) return null;
  if (typeof timeoutMs !== "number" || !(timeoutMs > 0 && Number.isFinite(timeoutMs))) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `pause: \`approvalTimeoutMs\` must be a positive number of milliseconds or null, got ${JSON.stringify(timeoutMs)}`,
    );
  }
  return Math.ceil(timeoutMs);
}

/** See `ExecutionRecordStore.claim`: one immediate transaction, so of racing claims one wins. */
export function claimExecution(context: SqliteRecordContext, options: ClaimOptions): ClaimResult {
  const leaseMs = checkedLeaseMs("claim", options.leaseMs);
  const { database, statements } = context;
  return database
    .transaction((): ClaimResult => {
      const { executionId } = options;
      const row = statements.execution.get(executionId);
      const job = statements.job.get(executionId);
      if (row === undefined || job === undefined || job.state !== "queued" || job.queue === null) {
        return { kind: "unavailable", status: row?.status ?? null };
      }
      const now = databaseNow(statements);
      const ended = endBeforeStart(context, row, job, now);
      if (ended) return { kind: "ended", execution: readExecution(context, executionId)! };
      const claimed = statements.claimJob.get(options.workerId, now + leaseMs, executionId);
      const running = claimed === undefined ? undefined : statements.claimExecution.get(executionId);
      if (claimed === undefined || running === undefined) {
        // The row was not queued although its job was (ended by a path that left the job): the
        // job has no use any more.
        if (claimed !== undefined) statements.deleteJob.run(executionId);
        return { kind: "unavailable", status: row.status };
      }
      appendStatus(context, subjectOf(running), "running", now);
      return { kind: "claimed", claim: claimOf(running, claimed, options.workerId) };
    })
    .immediate();
}

/**
 * Ends a queued execution that must not start: one asked to cancel (say while its lease lapsed
 * and recovery queued it again), or one past its deadline. False when it may start.
 */
function endBeforeStart(
  context: SqliteRecordContext,
  row: RecordExecutionRow,
  job: RecordJobRow,
  now: number,
): boolean {
  const cancel = context.statements.cancelOf.get(row.id);
  if (cancel !== undefined) {
    return endUnclaimedRow(context, {
      subject: subjectOf(row),
      from: "queued",
      status: "cancelled",
      code: "CANCELLED",
      message: `${row.skill_name}@${row.skill_version} was cancelled before it ran${cancel.reason === null ? "" : `: ${cancel.reason}`}`,
      approvalJson: null,
      now,
    });
  }
  if (job.deadline_at !== null && job.deadline_at <= now)
    return endPastDeadline(context, row, job.deadline_at, now);
  return false;
}

/**
 * Ends a queued execution whose deadline passed before any worker started it (`timeout`,
 * `DEADLINE_EXCEEDED`), inside the caller's transaction: at its claim, or when the recovery finds
 * it still queued (no worker serves its queue). False when it was no longer queued.
 */
export function endPastDeadline(
  context: SqliteRecordContext,
  row: RecordExecutionRow,
  deadlineAt: number,
  now: number,
): boolean {
  return endUnclaimedRow(context, {
    subject: subjectOf(row),
    from: "queued",
    status: "timeout",
    code: "DEADLINE_EXCEEDED",
    message: `${row.skill_name}@${row.skill_version} was still queued at its deadline (${formatTimestamp(deadlineAt)}), so it never started`,
    approvalJson: null,
    now,
  });
}

function claimOf(row: RecordExecutionRow, job: RecordJobRow, workerId: string): ExecutionClaim {
  return {
    executionId: row.id,
    fence: job.fence,
    workerId,
    leaseExpiresAt: job.lease_expires_at as number,
    skillId: row.skill_id,
    skillName: row.skill_name,
    skillVersion: row.skill_version,
    contentHash: job.content_hash ?? row.content_hash ?? "",
    apiKeyId: row.api_key_id,
    sessionId: row.session_id,
    parentExecutionId: row.parent_execution_id,
    idempotencyKey: row.idempotency_key,
    rawInputJson: job.input,
    optionsJson: job.options,
    deadlineAt: job.deadline_at,
    attempts: row.attempts,
    approval:
      job.approved === 1 && row.approval !== null ? (JSON.parse(row.approval) as ExecutionApproval) : null,
    createdAt: row.created_at,
    rerunnable: job.rerunnable === 1,
  };
}

/**
 * The job of `claim` while the claim is current (same fence, running, its row not final), read
 * inside the caller's transaction; undefined once another claim, a recovery or an end took it.
 */
function currentJob(context: SqliteRecordContext, claim: ClaimToken): RecordJobRow | undefined {
  const { statements } = context;
  const job = statements.heldJob.get(claim.executionId, claim.fence);
  if (job === undefined) return undefined;
  const row = statements.execution.get(claim.executionId);
  return row?.status === "running" ? job : undefined;
}

/**
 * Runs `change` with the job of `claim` in one immediate transaction while the claim is current;
 * false (and nothing written) when it is not.
 */
function whileHeld(
  context: SqliteRecordContext,
  claim: ClaimToken,
  change: (job: RecordJobRow) => boolean,
): boolean {
  return context.database
    .transaction(() => {
      const job = currentJob(context, claim);
      return job !== undefined && change(job);
    })
    .immediate();
}

/** See `ExecutionRecordStore.renew`. */
export function renewClaim(context: SqliteRecordContext, claim: ClaimToken, leaseMs: number): RenewResult {
  const checked = checkedLeaseMs("renew", leaseMs);
  const { database, statements } = context;
  return database
    .transaction((): RenewResult => {
      if (currentJob(context, claim) === undefined) {
        return { held: false, leaseExpiresAt: null, cancelRequested: false, cancelReason: null };
      }
      const leaseExpiresAt = databaseNow(statements) + checked;
      statements.renewLease.run(leaseExpiresAt, claim.executionId, claim.fence);
      const cancel = statements.cancelOf.get(claim.executionId);
      return {
        held: true,
        leaseExpiresAt,
        cancelRequested: cancel !== undefined,
        cancelReason: cancel?.reason ?? null,
      };
    })
    .immediate();
}

/** See `ExecutionRecordStore.finish`. */
export function finishClaim(context: SqliteRecordContext, claim: ClaimToken, outcome: FinalOutcome): boolean {
  if (!isFinalExecutionStatus(outcome.status)) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `finish: \`status\` must be a final status (${JSON.stringify(outcome.status)} is not); pause() stops at awaiting_approval`,
    );
  }
  const { statements } = context;
  return whileHeld(context, claim, (job) => {
    const now = databaseNow(statements);
    const { error } = outcome;
    const written = statements.finishExecution.run({
      id: claim.executionId,
      status: outcome.status,
      outputJson: outcome.outputJson,
      errorCode: error?.code ?? null,
      errorMessage: error?.message ?? null,
      errorData: error?.dataJson ?? null,
      attempts: outcome.attempts,
      durationMs: outcome.durationMs,
      now,
      traceId: outcome.traceId,
      spanId: outcome.spanId,
    });
    if (written.changes === 0) return false;
    statements.deleteJob.run(claim.executionId);
    statements.deleteCancel.run(claim.executionId);
    appendStatus(context, jobSubjectOf(job), outcome.status, now);
    return true;
  });
}

/** See `ExecutionRecordStore.recordProgress`. */
export function recordClaimProgress(
  context: SqliteRecordContext,
  claim: ClaimToken,
  progressJson: string,
): boolean {
  const { statements } = context;
  return whileHeld(context, claim, (job) => {
    statements.setProgress.run(progressJson, claim.executionId);
    statements.insertEvent.run(
      claim.executionId,
      job.api_key_id,
      job.skill_name,
      "progress",
      progressJson,
      context.runnerKey,
      databaseNow(statements),
    );
    return true;
  });
}

/**
 * See `ExecutionRecordStore.pause`: the job keeps its raw input for the run after the decision;
 * the approval's times are the database clock's, not the worker's.
 */
export function pauseClaim(context: SqliteRecordContext, claim: ClaimToken, pause: PauseOptions): boolean {
  const timeoutMs = checkedApprovalTimeoutMs(pause.approvalTimeoutMs);
  const { statements } = context;
  return whileHeld(context, claim, (job) => {
    const now = databaseNow(statements);
    const expiresAt = timeoutMs === null ? null : now + timeoutMs;
    const approval: ExecutionApproval = {
      ...pause.approval,
      requestedAt: formatTimestamp(now),
      expiresAt: expiresAt === null ? null : formatTimestamp(expiresAt),
    };
    statements.pauseExecution.run(JSON.stringify(approval), pause.attempts, claim.executionId);
    statements.pauseJob.run(expiresAt, claim.executionId, claim.fence);
    appendStatus(context, jobSubjectOf(job), "awaiting_approval", now);
    return true;
  });
}
