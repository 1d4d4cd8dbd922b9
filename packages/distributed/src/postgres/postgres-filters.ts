import type { ExecutionFilters } from "@skillbox/core";
import { checkedInstant } from "@skillbox/core/internal";

/** Largest page a listing returns, as in the SQLite audit trail. */
const MAX_PAGE = 1000;

/** `limit` (1–1000, default 50) and `offset` (from 0) of a page, as SQLite's `list()` reads them. */
export function pageOf(filters: ExecutionFilters): { limit: number; offset: number } {
  return {
    limit: Math.min(Math.max(Math.trunc(filters.limit ?? 50), 1), MAX_PAGE),
    offset: Math.max(Math.trunc(filters.offset ?? 0), 0),
  };
}

/**
 * The WHERE clause of the filters with `$n` placeholders numbered from `firstParameter`.
 * `since`/`until` compare `created_at` only: it is the database's clock, while an id carries
 * the clock of the host that made it, which may be behind (no id bound, unlike SQLite's).
 */
export function whereOf(
  filters: ExecutionFilters,
  firstParameter = 1,
): { where: string; parameters: unknown[] } {
  const clauses: string[] = [];
  const parameters: unknown[] = [];
  const add = (sql: (placeholder: string) => string, value: unknown) => {
    parameters.push(value);
    clauses.push(sql(`$${firstParameter + parameters.length - 1}`));
  };
  if (filters.owner !== undefined) add((p) => `api_key_id = ${p}`, filters.owner);
  if (filters.skill !== undefined) add((p) => `skill_name = ${p}`, filters.skill);
  if (filters.status !== undefined) {
    const statuses = Array.isArray(filters.status) ? filters.status : [filters.status];
    if (statuses.length === 0) return { where: "WHERE false", parameters: [] };
    add((p) => `status = ANY(${p}::text[])`, statuses);
  }
  if (filters.sessionId !== undefined) add((p) => `session_id = ${p}`, filters.sessionId);
  if (filters.parentExecutionId !== undefined)
    add((p) => `parent_execution_id = ${p}`, filters.parentExecutionId);
  const since = checkedInstant("listExecutions", "since", filters.since);
  if (since !== undefined) add((p) => `created_at >= ${p}`, Math.ceil(since));
  const until = checkedInstant("listExecutions", "until", filters.until);
  if (until !== undefined) add((p) => `created_at < ${p}`, Math.ceil(until));
  return { where: clauses.length === 0 ? "" : `WHERE ${clauses.join(" AND ")}`, parameters };
}
