import type { ExecutionApproval, ExecutionClaim } from "@skillbox/core";
import type { ExecutionRow, RecordJobRow } from "@skillbox/core/internal";

/** The queue a job goes to: `default` for a job written without one. */
export function queueOf(job: Pick<RecordJobRow, "queue">): string {
  return job.queue ?? "default";
}

/** What a claim hands the worker: the job (raw input, lease, fence) and its audit row. */
export function claimOf(
  job: RecordJobRow,
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
