import type Database from "better-sqlite3";
import { SkillboxError } from "../errors/skillbox-error.js";
import { EXECUTION_STATUSES, type ExecutionStatus, FINAL_EXECUTION_STATUSES } from "../types.js";

/** Executions of each skill name the statistics look at by default: the most recent 1000. */
const DEFAULT_STATS_WINDOW = 1000;
/** Largest `window` accepted. */
const MAX_STATS_WINDOW = 10_000;
/**
 * Rows one query reads at most: with many skill names the window per name shrinks (never under
 * {@link MIN_STATS_WINDOW}), so a registry of thousands of skills stays one bounded query. The
 * timeline and the duration histogram keep to the same cap.
 */
export const MAX_STATS_ROWS = 200_000;
const MIN_STATS_WINDOW = 10;

/** Options of `SkillExecutor.skillStats`. */
export interface SkillStatsOptions {
  /** The caller (`apiKeyId`) whose executions count; no other owner's ever do (default `public`). */
  owner?: string;
  /** Skill names to look at (default: every name the owner can see in the registry). */
  skills?: readonly string[];
  /**
   * How many of the owner's most recent executions of each skill name count (default 1000, at
   * most 10 000). With many names it shrinks so one query reads at most 200 000 rows; the
   * result's `window` says what was used.
   */
  window?: number;
  /** Only executions created at or after this instant count (default: no time bound). */
  since?: Date | string | number;
}

/** Recent statistics of one skill version, from its owner's point of view. */
export interface SkillStats {
  skillId: string;
  skillName: string;
  skillVersion: string;
  /** Executions in the window, finished or not. */
  executions: number;
  /** Of those, the finished ones (any final status). */
  finished: number;
  /** Executions in the window by status (statuses with none are left out). */
  statuses: Partial<Record<ExecutionStatus, number>>;
  /** `success` / `finished`, from 0 to 1; null when none finished. */
  successRate: number | null;
  /** Median duration (nearest rank) of the finished executions that have one, in ms; null when none. */
  p50DurationMs: number | null;
  /** 95th percentile duration (nearest rank), in ms; null when none. */
  p95DurationMs: number | null;
  /** When the newest execution in the window was created (ISO). */
  lastExecutionAt: string;
}

/** What `skillStats` answers: the statistics and the window they were computed over. */
export interface SkillStatsResult {
  /** Most recent executions per skill name counted, and the time bound (ISO) when one was given. */
  window: { executions: number; since: string | null };
  /** One entry per skill version with at least one execution in the window, by name then version id. */
  skills: SkillStats[];
}

/**
 * One skill version's row of the statistics query, as every dialect's query answers it
 * (`statuses`: a JSON object of counts by status); {@link skillStatsResult} turns rows into the answer.
 */
export interface SkillStatsRow {
  skill_id: string;
  skill_name: string;
  skill_version: string;
  executions: number;
  finished: number;
  succeeded: number;
  statuses: string;
  p50: number | null;
  p95: number | null;
  last_created_at: number;
}

/** The final statuses as an SQL list, for `status IN (…)`. */
export const FINAL_STATUS_LIST = FINAL_EXECUTION_STATUSES.map((status) => `'${status}'`).join(", ");

/**
 * How a per-name query (these statistics, the duration histogram) starts: `bounds` finds, per
 * name of `@names` (a JSON array), the rowid of the window's oldest execution by walking the
 * (owner, name) index backwards `@window` entries; `FROM` + {@link WINDOW_ROWS_JOIN} then reads
 * exactly the window through the same index (rowid is its implicit last column). CROSS JOIN
 * keeps that order: left to itself the planner scans every row of the owner instead.
 */
export const WINDOW_BOUNDS_SQL = `
  WITH names(name) AS (SELECT DISTINCT value FROM json_each(@names)),
  bounds AS MATERIALIZED (
    SELECT name, coalesce((
      SELECT rowid FROM skill_executions
      WHERE api_key_id = @owner AND skill_name = names.name
      ORDER BY rowid DESC LIMIT 1 OFFSET @window - 1), 0) AS lowest
    FROM names
  )`;

/** The rows of each name's window (`e`), after {@link WINDOW_BOUNDS_SQL}. */
export const WINDOW_ROWS_JOIN = `bounds CROSS JOIN skill_executions AS e
      ON e.api_key_id = @owner AND e.skill_name = bounds.name AND e.rowid >= bounds.lowest`;

/**
 * One statement for every name, over each name's window (see {@link WINDOW_BOUNDS_SQL}), with
 * one result row per value of `versionKey` (an SQL expression over `e`; see {@link STATS_VERSION_KEYS}).
 * Percentiles are nearest-rank over a window function; `(n * p + 99) / 100` is ceil(n·p/100)
 * in integer arithmetic (SQLite's math functions are optional).
 */
function statsSql(versionKey: string): string {
  return `${WINDOW_BOUNDS_SQL},
  recent AS MATERIALIZED (
    SELECT ${versionKey} AS version_key, e.skill_id, e.skill_name, e.skill_version, e.status,
      e.duration_ms, e.created_at
    FROM ${WINDOW_ROWS_JOIN}
    WHERE e.created_at >= @since
  ),
  ranked AS (
    SELECT version_key, duration_ms,
      ROW_NUMBER() OVER (PARTITION BY version_key ORDER BY duration_ms) AS position,
      COUNT(*) OVER (PARTITION BY version_key) AS measured
    FROM recent WHERE duration_ms IS NOT NULL AND status IN (${FINAL_STATUS_LIST})
  ),
  percentiles AS (
    SELECT version_key,
      MIN(CASE WHEN position >= (measured * 50 + 99) / 100 THEN duration_ms END) AS p50,
      MIN(CASE WHEN position >= (measured * 95 + 99) / 100 THEN duration_ms END) AS p95
    FROM ranked GROUP BY version_key
  ),
  grouped AS (
    SELECT version_key, status, COUNT(*) AS count, MIN(skill_id) AS skill_id,
      MIN(skill_name) AS skill_name, MIN(skill_version) AS skill_version,
      MAX(created_at) AS last_created_at
    FROM recent GROUP BY version_key, status
  ),
  counts AS (
    SELECT version_key, MIN(skill_id) AS skill_id, MIN(skill_name) AS skill_name,
      MIN(skill_version) AS skill_version,
      SUM(count) AS executions,
      SUM(CASE WHEN status IN (${FINAL_STATUS_LIST}) THEN count ELSE 0 END) AS finished,
      SUM(CASE WHEN status = 'success' THEN count ELSE 0 END) AS succeeded,
      MAX(last_created_at) AS last_created_at,
      json_group_object(status, count) AS statuses
    FROM grouped GROUP BY version_key
  )
  SELECT counts.*, percentiles.p50, percentiles.p95
  FROM counts LEFT JOIN percentiles USING (version_key)
  ORDER BY counts.skill_name, counts.skill_id`;
}

/**
 * What tells one skill version from another in the statistics, as SQL over an execution `e`:
 * on one host its registry id; in the shared record its name and version, because every host's
 * registry gives the same version an id of its own (`@` never occurs in a version, so the key is
 * unambiguous). Both dialects read these expressions alike.
 */
export const STATS_VERSION_KEYS = {
  skillId: "e.skill_id",
  nameAndVersion: "e.skill_name || '@' || e.skill_version",
} as const;

/**
 * Per-skill-version success rates and duration percentiles over each name's most recent
 * executions by one owner (see {@link SkillStatsOptions}): one bounded query, prepared once.
 */
export class ExecutionStats {
  private readonly statement: Database.Statement<[Record<string, unknown>], SkillStatsRow>;

  /**
   * `versionKey`: `skillId` (the default, one host's registry) or `nameAndVersion` (the shared
   * record, whose rows come from many registries).
   */
  constructor(database: Database.Database, versionKey: keyof typeof STATS_VERSION_KEYS = "skillId") {
    this.statement = database.prepare<[Record<string, unknown>], SkillStatsRow>(
      statsSql(STATS_VERSION_KEYS[versionKey]),
    );
  }

  /** The statistics of `names` for `owner`; an empty list of names answers without a query. */
  compute(owner: string, names: readonly string[], options: SkillStatsOptions): SkillStatsResult {
    const range = perNameRange("skillStats", names, options);
    if (names.length === 0) return skillStatsResult(range, []);
    const rows = this.statement.all({
      names: JSON.stringify(names),
      owner,
      window: range.window,
      since: range.since ?? Number.MIN_SAFE_INTEGER,
    });
    return skillStatsResult(range, rows);
  }
}

/** The checked window and time bound of a per-name query (statistics, duration histogram). */
export interface PerNameRange {
  /** Executions per name looked at (see {@link windowPerName}). */
  window: number;
  /** Epoch ms of `since`; undefined: no time bound. */
  since: number | undefined;
}

/**
 * Checks `window` and `since` of a per-name query (`INPUT_INVALID` naming `method` and the
 * field) and resolves the window for `names`: the same for every dialect, so they agree.
 */
export function perNameRange(
  method: string,
  names: readonly string[],
  options: { window?: number; since?: Date | string | number },
): PerNameRange {
  return {
    window: windowPerName(method, options.window, names),
    since: checkedInstant(method, "since", options.since),
  };
}

/** The answer of `skillStats` for `range`, from the rows of any dialect's statistics query. */
export function skillStatsResult(range: PerNameRange, rows: readonly SkillStatsRow[]): SkillStatsResult {
  return {
    window: {
      executions: range.window,
      since: range.since === undefined ? null : new Date(range.since).toISOString(),
    },
    skills: rows.map(rowToStats),
  };
}

function rowToStats(row: SkillStatsRow): SkillStats {
  const statuses = inStatusOrder(JSON.parse(row.statuses) as Partial<Record<ExecutionStatus, number>>);
  return {
    skillId: row.skill_id,
    skillName: row.skill_name,
    skillVersion: row.skill_version,
    executions: row.executions,
    finished: row.finished,
    statuses,
    successRate: row.finished === 0 ? null : row.succeeded / row.finished,
    p50DurationMs: row.p50,
    p95DurationMs: row.p95,
    lastExecutionAt: new Date(row.last_created_at).toISOString(),
  };
}

/**
 * The executions per name a per-name query looks at: `window` (default 1000, checked), shrunk
 * so `names` times it stays within {@link MAX_STATS_ROWS}. `method` names the caller in errors.
 */
function windowPerName(method: string, value: number | undefined, names: readonly string[]): number {
  const requested = checkedWindow(method, value);
  const distinct = new Set(names).size;
  if (distinct === 0) return requested;
  return Math.min(requested, Math.max(MIN_STATS_WINDOW, Math.floor(MAX_STATS_ROWS / distinct)));
}

function checkedWindow(method: string, value: number | undefined): number {
  if (value === undefined) return DEFAULT_STATS_WINDOW;
  if (!Number.isInteger(value) || value < 1 || value > MAX_STATS_WINDOW) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `${method}: \`window\` must be a whole number of executions from 1 to ${MAX_STATS_WINDOW}, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** An instant option (`since`, `until`) in epoch ms; undefined stays undefined. `method` names the caller. */
export function checkedInstant(
  method: string,
  field: string,
  value: Date | string | number | undefined,
): number | undefined {
  if (value === undefined) return undefined;
  const instant = new Date(value).getTime();
  if (Number.isNaN(instant)) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `${method}: \`${field}\` must be a date, got ${JSON.stringify(value)}`,
    );
  }
  return instant;
}

/** The same counts with their keys in the documented order of statuses, whatever order SQLite grouped them in. */
export function inStatusOrder(
  statuses: Partial<Record<ExecutionStatus, number>>,
): Partial<Record<ExecutionStatus, number>> {
  const ordered: Partial<Record<ExecutionStatus, number>> = {};
  for (const status of EXECUTION_STATUSES) {
    if (statuses[status] !== undefined) ordered[status] = statuses[status];
  }
  return ordered;
}
