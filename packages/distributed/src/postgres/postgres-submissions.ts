import type {
  InsertQueuedResult,
  QueuedExecutionRecord,
  StaleQueuedExecution,
  StaleQueuedOptions,
} from "@skillbox/core";
import { type ExecutionRow, rowToExecution } from "@skillbox/core/internal";
import { DATABASE_NOW } from "./postgres-clock.js";
import { appendStatus } from "./postgres-events.js";
import { type PostgresSession, type Queryable, ROLLBACK } from "./postgres-session.js";

/** Ids one `markEnqueued` statement takes: a huge batch is split, each statement stays small. */
const MARK_BATCH = 1000;

/** The execution `owner` ran with `key`, and its input hash. */
export async function byIdempotencyKey(
  queryable: Queryable,
  owner: string,
  key: string,
): Promise<(ExecutionRow & { input_hash: string | null }) | undefined> {
  return queryable.one<ExecutionRow & { input_hash: string | null }>(
    "SELECT * FROM skill_executions WHERE api_key_id = $1 AND idempotency_key = $2",
    [owner, key],
  );
}

/**
 * Writes a submitted execution `queued` with its job and first event, in one transaction. A
 * repeated idempotency key of the owner writes nothing (the unique index decides: two hosts
 * inserting the same key at once write one row, the other waits for it and reads it back).
 */
export async function insertQueued(
  session: PostgresSession,
  record: QueuedExecutionRecord,
): Promise<InsertQueuedResult> {
  // Twice at most: a conflicting row that was deleted before it could be read back (never,
  // today: rows are not deleted) lets the insert through the second time.
  for (let attempt = 0; attempt < 2; attempt++) {
    const inserted = await session.transaction(async (transaction) => {
      const row = await transaction.one<ExecutionRow>(
        `INSERT INTO skill_executions (id, skill_id, skill_name, skill_version, api_key_id, session_id,
           parent_execution_id, idempotency_key, input, input_hash, status, attempts, created_at, content_hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'queued', 0, ${DATABASE_NOW}, $11)
         ON CONFLICT (api_key_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
         RETURNING *`,
        [
          record.id,
          record.skillId,
          record.skillName,
          record.skillVersion,
          record.apiKeyId,
          record.sessionId,
          record.parentExecutionId,
          record.idempotencyKey,
          record.auditedInputJson,
          record.inputHash,
          record.contentHash,
        ],
      );
      if (row === undefined) return ROLLBACK;
      await transaction.run(
        `INSERT INTO skill_execution_jobs (execution_id, api_key_id, skill_id, skill_name, input, options, state,
           queued_at, rerunnable, queue, content_hash, deadline_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8, $9, $10, $11)`,
        [
          record.id,
          record.apiKeyId,
          record.skillId,
          record.skillName,
          record.rawInputJson,
          record.optionsJson,
          row.created_at,
          record.rerunnable ? 1 : 0,
          record.queue,
          record.contentHash,
          // The deadline on the database clock (the row's created_at), as the claim compares it.
          record.totalTimeoutMs === null ? null : row.created_at + Math.ceil(record.totalTimeoutMs),
        ],
      );
      await appendStatus(
        transaction,
        { id: record.id, owner: record.apiKeyId, skillName: record.skillName },
        "queued",
      );
      return row;
    });
    if (inserted !== undefined) return { inserted: true, execution: rowToExecution(inserted) };
    if (record.idempotencyKey === null) break;
    const existing = await byIdempotencyKey(session, record.apiKeyId, record.idempotencyKey);
    if (existing !== undefined) {
      return { inserted: false, existing: rowToExecution(existing), inputHash: existing.input_hash };
    }
  }
  throw new Error(
    `PostgresRecordStore: execution ${record.id} was neither inserted nor found by its idempotency key`,
  );
}

/** Notes that the jobs of `ids` were added to the queue now (database clock). */
export async function markEnqueued(session: PostgresSession, ids: readonly string[]): Promise<void> {
  for (let start = 0; start < ids.length; start += MARK_BATCH) {
    await session.run(
      `UPDATE skill_execution_jobs SET enqueued_at = ${DATABASE_NOW}
       WHERE execution_id = ANY($1::text[]) AND state = 'queued'`,
      [ids.slice(start, start + MARK_BATCH)],
    );
  }
}

/** Queued jobs last added longer than `olderThanMs` ago, or never: oldest submission first. */
export async function staleQueued(
  session: PostgresSession,
  options: StaleQueuedOptions,
): Promise<StaleQueuedExecution[]> {
  const rows = await session.rows<{
    execution_id: string;
    queue: string | null;
    content_hash: string | null;
  }>(
    `SELECT execution_id, queue, content_hash FROM skill_execution_jobs
     WHERE state = 'queued' AND (enqueued_at IS NULL OR enqueued_at < ${DATABASE_NOW} - $1)
     ORDER BY queued_at, execution_id LIMIT $2`,
    [Math.max(0, Math.trunc(options.olderThanMs)), boundedLimit(options.limit)],
  );
  return rows.map((row) => ({
    id: row.execution_id,
    queue: row.queue ?? "default",
    contentHash: row.content_hash ?? "",
  }));
}

/** A caller's `limit` as a statement takes it: a whole number from 0 to 10 000. */
export function boundedLimit(limit: number): number {
  return Math.min(Math.max(Math.trunc(Number.isFinite(limit) ? limit : 0), 0), 10_000);
}
