import {
  EXECUTION_STATUSES,
  type ExecutionFilters,
  type ExecutionRecord,
  type ExecutionStatus,
} from "../api/api-types.js";

/** Rows of one page of the executions table: one request each, however many executions exist. */
export const EXECUTIONS_PAGE_SIZE = 50;

/**
 * The executions table's filters and page, as they live in the route's query
 * (`#/executions?skill=echo&status=error,timeout&session=s1&from=<ISO>&to=<ISO>&offset=50`), so a
 * filtered view is a link.
 */
export interface ExecutionQuery {
  skill: string;
  statuses: ExecutionStatus[];
  session: string;
  /** ISO instants, `[from, to)` of `createdAt`; "" for none. */
  from: string;
  to: string;
  offset: number;
}

const KNOWN_STATUSES = new Set<string>(EXECUTION_STATUSES);

/** The query a route carries; unknown statuses and unreadable instants or offsets are left out. */
export function readExecutionQuery(query: URLSearchParams): ExecutionQuery {
  const statuses = (query.get("status") ?? "")
    .split(",")
    .map((status) => status.trim())
    .filter((status): status is ExecutionStatus => KNOWN_STATUSES.has(status));
  const offset = Number(query.get("offset") ?? "0");
  return {
    skill: (query.get("skill") ?? "").trim(),
    statuses: [...new Set(statuses)],
    session: (query.get("session") ?? "").trim(),
    from: readInstant(query.get("from")),
    to: readInstant(query.get("to")),
    offset: Number.isSafeInteger(offset) && offset > 0 ? offset : 0,
  };
}

/** The route query of `query` (for `href(["executions"], …)`); empty filters are left out. */
export function writeExecutionQuery(query: ExecutionQuery): Record<string, string | undefined> {
  return {
    skill: query.skill || undefined,
    status: query.statuses.length === 0 ? undefined : query.statuses.join(","),
    session: query.session || undefined,
    from: query.from || undefined,
    to: query.to || undefined,
    offset: query.offset === 0 ? undefined : String(query.offset),
  };
}

/** The `GET /api/executions` filters of one page of `query`. */
export function toExecutionFilters(query: ExecutionQuery): ExecutionFilters {
  return {
    skill: query.skill || undefined,
    status: query.statuses.length === 0 ? undefined : query.statuses,
    sessionId: query.session || undefined,
    since: query.from || undefined,
    until: query.to || undefined,
    limit: EXECUTIONS_PAGE_SIZE,
    offset: query.offset,
  };
}

/** Whether any filter is set (the page does not count). */
export function hasExecutionFilters(query: ExecutionQuery): boolean {
  return (
    query.skill !== "" ||
    query.statuses.length > 0 ||
    query.session !== "" ||
    query.from !== "" ||
    query.to !== ""
  );
}

/** Whether `execution` belongs in the table `query` filters (as the server would decide). */
export function matchesExecutionQuery(
  execution: Pick<ExecutionRecord, "skillName" | "status" | "sessionId" | "createdAt">,
  query: ExecutionQuery,
): boolean {
  if (query.skill !== "" && execution.skillName !== query.skill) return false;
  if (query.statuses.length > 0 && !query.statuses.includes(execution.status)) return false;
  if (query.session !== "" && execution.sessionId !== query.session) return false;
  const created = Date.parse(execution.createdAt);
  if (query.from !== "" && created < Date.parse(query.from)) return false;
  if (query.to !== "" && created >= Date.parse(query.to)) return false;
  return true;
}

function readInstant(value: string | null): string {
  if (value === null || value.trim() === "") return "";
  const date = new Date(value.trim());
  return Number.isNaN(date.getTime()) ? "" : date.toISOString();
}
