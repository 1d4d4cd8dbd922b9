import type {
  ExecutionFilters,
  ExecutionSummary,
  ExecutionSummaryOptions,
  SkillExecution,
} from "@skillbox/core";
import {
  type ExecutionRow,
  type ExecutionSummaryRow,
  resolveSummaryOptions,
  rowToExecution,
  rowToSummary,
} from "@skillbox/core/internal";
import { pageOf, whereOf } from "./postgres-filters.js";
import { summaryColumns } from "./postgres-rows.js";
import type { Queryable } from "./postgres-session.js";

/**
 * Newest first, as SQLite's rowid order: by the database clock's `created_at`, then by id
 * (UUIDv7, time-ordered) for rows of the same millisecond, so pages never overlap.
 */
const NEWEST_FIRST = "ORDER BY created_at DESC, id DESC";
/** Summaries read per round trip: a page stops early at `maxBytes` without reading the rest. */
const SUMMARY_CHUNK = 100;

/** One execution, or undefined (also when `owner` does not own it). */
export async function getExecution(
  queryable: Queryable,
  id: string,
  owner?: string,
): Promise<SkillExecution | undefined> {
  const row = await queryable.one<ExecutionRow>(
    "SELECT * FROM skill_executions WHERE id = $1 AND ($2::text IS NULL OR api_key_id = $2)",
    [id, owner ?? null],
  );
  return row === undefined ? undefined : rowToExecution(row);
}

/** A page of full records, newest first. */
export async function listExecutions(
  queryable: Queryable,
  filters: ExecutionFilters = {},
): Promise<SkillExecution[]> {
  const { where, parameters } = whereOf(filters);
  const { limit, offset } = pageOf(filters);
  const next = parameters.length + 1;
  const rows = await queryable.rows<ExecutionRow>(
    `SELECT * FROM skill_executions ${where} ${NEWEST_FIRST} LIMIT $${next} OFFSET $${next + 1}`,
    [...parameters, limit, offset],
  );
  return rows.map(rowToExecution);
}

/** How many executions match (pagination ignored). */
export async function countExecutions(queryable: Queryable, filters: ExecutionFilters = {}): Promise<number> {
  const { where, parameters } = whereOf(filters);
  const row = await queryable.one<{ count: number }>(
    `SELECT count(*) AS count FROM skill_executions ${where}`,
    parameters,
  );
  return row?.count ?? 0;
}

/**
 * The page `listExecutions` would return, as summaries (bodies cut in SQL), stopping before its
 * JSON would cross `maxBytes` — read in chunks, so rows past the budget are never fetched.
 */
export async function listSummaries(
  queryable: Queryable,
  filters: ExecutionFilters & ExecutionSummaryOptions = {},
): Promise<ExecutionSummary[]> {
  const { previewLength, maxBytes } = resolveSummaryOptions(filters);
  const { where, parameters } = whereOf(filters, 2);
  const { limit, offset } = pageOf(filters);
  const next = parameters.length + 2;
  const sql = `SELECT ${summaryColumns("$1")} FROM skill_executions ${where} ${NEWEST_FIRST} LIMIT $${next} OFFSET $${next + 1}`;
  const summaries: ExecutionSummary[] = [];
  // "[" and "]", then each summary and its comma.
  let bytes = 2;
  while (summaries.length < limit) {
    const chunk = Math.min(SUMMARY_CHUNK, limit - summaries.length);
    const rows = await queryable.rows<ExecutionSummaryRow>(sql, [
      previewLength,
      ...parameters,
      chunk,
      offset + summaries.length,
    ]);
    for (const row of rows) {
      const summary = rowToSummary(row);
      const size = Buffer.byteLength(JSON.stringify(summary)) + (summaries.length === 0 ? 0 : 1);
      if (summaries.length > 0 && bytes + size > maxBytes) return summaries;
      summaries.push(summary);
      bytes += size;
    }
    if (rows.length < chunk) break;
  }
  return summaries;
}
