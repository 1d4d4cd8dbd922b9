import type { SkillExecution } from "@skillbox/core";
import { nestedRecordColumns } from "@skillbox/core/internal";
import { appendStatus } from "./postgres-events.js";
import { type PostgresSession, ROLLBACK } from "./postgres-session.js";

/**
 * `ExecutionRecordStore.recordNested` on PostgreSQL: the final row and its status event (and
 * NOTIFY, delivered at commit) in one transaction; a row with the id already there writes
 * nothing, its event included.
 */
export async function recordNested(
  session: PostgresSession,
  execution: SkillExecution,
  contentHash: string,
): Promise<void> {
  const row = nestedRecordColumns(execution, contentHash);
  await session.transaction(async (transaction) => {
    const inserted = await transaction.run(
      `INSERT INTO skill_executions (id, skill_id, skill_name, skill_version, api_key_id, session_id,
         parent_execution_id, idempotency_key, input, output, status, error_code, error_message, error_data,
         attempts, duration_ms, progress, approval, created_at, finished_at, trace_id, span_id, content_hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
         $21, $22, $23)
       ON CONFLICT (id) DO NOTHING`,
      [
        row.id,
        row.skillId,
        row.skillName,
        row.skillVersion,
        row.apiKeyId,
        row.sessionId,
        row.parentExecutionId,
        row.idempotencyKey,
        row.inputJson,
        row.outputJson,
        row.status,
        row.errorCode,
        row.errorMessage,
        row.errorData,
        row.attempts,
        row.durationMs,
        row.progressJson,
        row.approvalJson,
        row.createdAt,
        row.finishedAt,
        row.traceId,
        row.spanId,
        row.contentHash,
      ],
    );
    if (inserted === 0) return ROLLBACK;
    await appendStatus(
      transaction,
      { id: row.id, owner: row.apiKeyId, skillName: row.skillName },
      row.status,
    );
    return true;
  });
}
