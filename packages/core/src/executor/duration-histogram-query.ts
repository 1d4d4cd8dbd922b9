import type Database from "better-sqlite3";
import {
  FINAL_STATUS_LIST,
  type PerNameRange,
  perNameRange,
  WINDOW_BOUNDS_SQL,
  WINDOW_ROWS_JOIN,
} from "./execution-stats.js";

/**
 * Upper bounds, in ms, of the buckets of a duration histogram: bucket `i` counts durations in
 * `(bounds[i - 1], bounds[i]]` (the first from 0), and one last bucket counts those above the
 * last bound. Fixed, so histograms of different skills and moments compare.
 */
export const DURATION_HISTOGRAM_BOUNDS_MS: readonly number[] = Object.freeze([
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 30_000, 60_000,
]);

/** Options of `SkillExecutor.durationHistogram`. */
export interface DurationHistogramOptions {
  /** The caller (`apiKeyId`) whose executions count; no other owner's ever do (default `public`). */
  owner?: string;
  /** Skill names to look at (default: every name the owner can see in the registry). */
  skills?: readonly string[];
  /**
   * How many of the owner's most recent executions of each name are looked at (default 1000, at
   * most 10 000, shrunk as `skillStats` does so one query reads at most 200 000 rows); of those,
   * the finished ones with a duration count.
   */
  window?: number;
  /** Only executions created at or after this instant count (default: no time bound). */
  since?: Date | string | number;
}

/** One bucket of a skill's histogram: how many durations fell at or under `upToMs` (and above the bound before). */
export interface DurationBucket {
  /** The bucket's upper bound in ms; null for the last bucket, which has none. */
  upToMs: number | null;
  count: number;
}

/** The durations of one skill name's finished executions in the window. */
export interface SkillDurations {
  skillName: string;
  /** Finished executions with a duration that were counted. */
  count: number;
  /** Median duration (nearest rank) in ms. */
  p50DurationMs: number | null;
  /** 95th percentile duration (nearest rank) in ms. */
  p95DurationMs: number | null;
  /** One entry per bound of {@link DURATION_HISTOGRAM_BOUNDS_MS} plus the last, unbounded one; empty ones included. */
  buckets: DurationBucket[];
}

/** What `durationHistogram` answers. */
export interface DurationHistogram {
  /** {@link DURATION_HISTOGRAM_BOUNDS_MS}. */
  boundsMs: number[];
  /** Most recent executions per skill name looked at, and the time bound (ISO) when one was given. */
  window: { executions: number; since: string | null };
  /** One entry per skill name with at least one finished execution with a duration in the window, by name. */
  skills: SkillDurations[];
}

/**
 * One skill name's row of the histogram query, as every dialect's query answers it (`buckets`: a
 * JSON object of counts by bucket index); {@link durationHistogramResult} turns rows into the answer.
 */
export interface DurationHistogramRow {
  skill_name: string;
  measured: number;
  p50: number | null;
  p95: number | null;
  buckets: string;
}

/** `CASE` giving a `duration_ms`'s bucket index (how many bounds lie below it), in SQL both dialects read alike. */
export const BUCKET_OF_DURATION = `CASE ${DURATION_HISTOGRAM_BOUNDS_MS.map(
  (bound, index) => `WHEN duration_ms <= ${bound} THEN ${index}`,
).join(" ")} ELSE ${DURATION_HISTOGRAM_BOUNDS_MS.length} END`;

/**
 * One statement over each name's window, bounded as `skillStats`'s is (see `WINDOW_BOUNDS_SQL`).
 * Percentiles are nearest-rank; buckets are counted per name and handed back as one JSON object
 * per name.
 */
const HISTOGRAM_SQL = `${WINDOW_BOUNDS_SQL},
  recent AS MATERIALIZED (
    SELECT e.skill_name, e.duration_ms
    FROM ${WINDOW_ROWS_JOIN}
    WHERE e.created_at >= @since AND e.duration_ms IS NOT NULL AND e.status IN (${FINAL_STATUS_LIST})
  ),
  ranked AS (
    SELECT skill_name, duration_ms,
      ROW_NUMBER() OVER (PARTITION BY skill_name ORDER BY duration_ms) AS position,
      COUNT(*) OVER (PARTITION BY skill_name) AS measured
    FROM recent
  ),
  percentiles AS (
    SELECT skill_name, MAX(measured) AS measured,
      MIN(CASE WHEN position >= (measured * 50 + 99) / 100 THEN duration_ms END) AS p50,
      MIN(CASE WHEN position >= (measured * 95 + 99) / 100 THEN duration_ms END) AS p95
    FROM ranked GROUP BY skill_name
  ),
  counted AS (
    SELECT skill_name, ${BUCKET_OF_DURATION} AS bucket, COUNT(*) AS count
    FROM recent GROUP BY skill_name, bucket
  ),
  histograms AS (
    SELECT skill_name, json_group_object(bucket, count) AS buckets FROM counted GROUP BY skill_name
  )
  SELECT percentiles.*, histograms.buckets
  FROM percentiles JOIN histograms USING (skill_name)
  ORDER BY skill_name`;

/**
 * Per-skill-name duration histograms over each name's most recent executions by one owner (see
 * {@link DurationHistogramOptions}): one bounded query, prepared once.
 */
export class DurationHistogramQuery {
  private readonly statement: Database.Statement<[Record<string, unknown>], DurationHistogramRow>;

  constructor(database: Database.Database) {
    this.statement = database.prepare<[Record<string, unknown>], DurationHistogramRow>(HISTOGRAM_SQL);
  }

  /** The histograms of `names` for `owner`; an empty list of names answers without a query. */
  compute(owner: string, names: readonly string[], options: DurationHistogramOptions): DurationHistogram {
    const range = perNameRange("durationHistogram", names, options);
    if (names.length === 0) return durationHistogramResult(range, []);
    const rows = this.statement.all({
      names: JSON.stringify(names),
      owner,
      window: range.window,
      since: range.since ?? Number.MIN_SAFE_INTEGER,
    });
    return durationHistogramResult(range, rows);
  }
}

/** The answer of `durationHistogram` for `range`, from the rows of any dialect's histogram query. */
export function durationHistogramResult(
  range: PerNameRange,
  rows: readonly DurationHistogramRow[],
): DurationHistogram {
  return {
    boundsMs: [...DURATION_HISTOGRAM_BOUNDS_MS],
    window: {
      executions: range.window,
      since: range.since === undefined ? null : new Date(range.since).toISOString(),
    },
    skills: rows.map(rowToDurations),
  };
}

function rowToDurations(row: DurationHistogramRow): SkillDurations {
  const counted = JSON.parse(row.buckets) as Record<string, number>;
  const buckets: DurationBucket[] = [...DURATION_HISTOGRAM_BOUNDS_MS, null].map((upToMs, index) => ({
    upToMs,
    count: counted[index] ?? 0,
  }));
  return {
    skillName: row.skill_name,
    count: row.measured,
    p50DurationMs: row.p50,
    p95DurationMs: row.p95,
    buckets,
  };
}
