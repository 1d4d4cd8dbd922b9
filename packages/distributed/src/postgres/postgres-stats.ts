import type {
  DurationHistogram,
  DurationHistogramOptions,
  ExecutionTimeline,
  ExecutionTimelineOptions,
  SkillStatsOptions,
  SkillStatsResult,
} from "@skillbox/core";
import {
  BUCKET_OF_DURATION,
  type DurationHistogramRow,
  durationHistogramResult,
  type ExecutionTimelineRow,
  FINAL_STATUS_LIST,
  MAX_STATS_ROWS,
  perNameRange,
  type SkillStatsRow,
  STATS_VERSION_KEYS,
  skillStatsResult,
  timelineRange,
  timelineResult,
} from "@skillbox/core/internal";
import { DATABASE_NOW } from "./postgres-clock.js";
import type { Queryable } from "./postgres-session.js";

/*
 * The statistics of the SQLite audit trail (execution-stats.ts, execution-timeline-query.ts,
 * duration-histogram-query.ts) in PostgreSQL: the same options checked by the same functions,
 * the same rows turned into the same answers, and SQL that computes the same numbers — percentiles
 * by the same integer nearest-rank rule (not percentile_disc, whose float fraction could pick a
 * neighbour), buckets by the same CASE, names ordered bytewise (COLLATE "C") as SQLite orders them.
 */

/**
 * Per name of `$1`, the newest `$3` executions of owner `$2`, newest by the database clock as
 * the listings order them: the (api_key_id, skill_name, created_at DESC, id DESC) index reads
 * exactly those rows, so the query is bounded by the window, not by the owner's history.
 * `since` ($4) filters inside the window, as SQLite's does.
 */
const WINDOW_SQL = `
  WITH names AS (SELECT DISTINCT name FROM unnest($1::text[]) AS name),
  windowed AS MATERIALIZED (
    SELECT w.* FROM names CROSS JOIN LATERAL (
      SELECT ${STATS_VERSION_KEYS.nameAndVersion} AS version_key, e.skill_id, e.skill_name,
        e.skill_version, e.status, e.duration_ms, e.created_at
      FROM skill_executions AS e
      WHERE e.api_key_id = $2::text AND e.skill_name = names.name
      ORDER BY e.created_at DESC, e.id DESC
      LIMIT $3::integer
    ) AS w
    WHERE w.created_at >= $4::bigint
  )`;

/**
 * One row per skill version, told apart by name and version as the SQLite record's query does
 * (`STATS_VERSION_KEYS`: each host's registry has its own ids). `(n * p + 99) / 100` is
 * ceil(n·p/100) in integer arithmetic, as in SQLite's query.
 */
const STATS_SQL = `${WINDOW_SQL},
  ranked AS (
    SELECT version_key, duration_ms,
      row_number() OVER (PARTITION BY version_key ORDER BY duration_ms) AS position,
      count(*) OVER (PARTITION BY version_key) AS measured
    FROM windowed WHERE duration_ms IS NOT NULL AND status IN (${FINAL_STATUS_LIST})
  ),
  percentiles AS (
    SELECT version_key,
      min(CASE WHEN position >= (measured * 50 + 99) / 100 THEN duration_ms END) AS p50,
      min(CASE WHEN position >= (measured * 95 + 99) / 100 THEN duration_ms END) AS p95
    FROM ranked GROUP BY version_key
  ),
  grouped AS (
    SELECT version_key, status, count(*) AS count, min(skill_id COLLATE "C") AS skill_id,
      min(skill_name COLLATE "C") AS skill_name, min(skill_version COLLATE "C") AS skill_version,
      max(created_at) AS last_created_at
    FROM windowed GROUP BY version_key, status
  ),
  counts AS (
    SELECT version_key, min(skill_id COLLATE "C") AS skill_id,
      min(skill_name COLLATE "C") AS skill_name, min(skill_version COLLATE "C") AS skill_version,
      sum(count)::bigint AS executions,
      sum(CASE WHEN status IN (${FINAL_STATUS_LIST}) THEN count ELSE 0 END)::bigint AS finished,
      sum(CASE WHEN status = 'success' THEN count ELSE 0 END)::bigint AS succeeded,
      max(last_created_at) AS last_created_at,
      json_object_agg(status, count)::text AS statuses
    FROM grouped GROUP BY version_key
  )
  SELECT counts.*, percentiles.p50, percentiles.p95
  FROM counts LEFT JOIN percentiles USING (version_key)
  ORDER BY counts.skill_name COLLATE "C", counts.skill_id COLLATE "C"`;

const HISTOGRAM_SQL = `${WINDOW_SQL},
  recent AS (
    SELECT skill_name, duration_ms FROM windowed
    WHERE duration_ms IS NOT NULL AND status IN (${FINAL_STATUS_LIST})
  ),
  ranked AS (
    SELECT skill_name, duration_ms,
      row_number() OVER (PARTITION BY skill_name ORDER BY duration_ms) AS position,
      count(*) OVER (PARTITION BY skill_name) AS measured
    FROM recent
  ),
  percentiles AS (
    SELECT skill_name, max(measured) AS measured,
      min(CASE WHEN position >= (measured * 50 + 99) / 100 THEN duration_ms END) AS p50,
      min(CASE WHEN position >= (measured * 95 + 99) / 100 THEN duration_ms END) AS p95
    FROM ranked GROUP BY skill_name
  ),
  counted AS (
    SELECT skill_name, ${BUCKET_OF_DURATION} AS bucket, count(*) AS count
    FROM recent GROUP BY skill_name, bucket
  ),
  histograms AS (
    SELECT skill_name, json_object_agg(bucket, count)::text AS buckets FROM counted GROUP BY skill_name
  )
  SELECT percentiles.*, histograms.buckets
  FROM percentiles JOIN histograms USING (skill_name)
  ORDER BY skill_name COLLATE "C"`;

/**
 * The newest `$6` executions of owner `$1` created in `[$3, $4)` (by the time index, or the
 * (owner, skill) one with `$2`), counted per bucket of `$5` ms from `$3` and by status. Integer
 * division of non-negative BIGINTs floors, as SQLite's CAST does.
 */
const TIMELINE_SQL = `
  WITH recent AS MATERIALIZED (
    SELECT created_at, status FROM skill_executions
    WHERE api_key_id = $1::text AND ($2::text IS NULL OR skill_name = $2::text)
      AND created_at >= $3::bigint AND created_at < $4::bigint
    ORDER BY created_at DESC, id DESC
    LIMIT $6::integer
  )
  SELECT (created_at - $3::bigint) / $5::bigint AS bucket, status, count(*) AS count
  FROM recent GROUP BY 1, 2`;

/** `SkillExecutor.skillStats` over the PostgreSQL record (see `ExecutionRecordStore.skillStats`). */
export async function skillStats(
  queryable: Queryable,
  owner: string,
  names: readonly string[],
  options: SkillStatsOptions = {},
): Promise<SkillStatsResult> {
  const range = perNameRange("skillStats", names, options);
  if (names.length === 0) return skillStatsResult(range, []);
  const rows = await queryable.rows<SkillStatsRow>(STATS_SQL, [
    names,
    owner,
    range.window,
    range.since ?? Number.MIN_SAFE_INTEGER,
  ]);
  return skillStatsResult(range, rows);
}

/** `SkillExecutor.durationHistogram` over the PostgreSQL record (see `ExecutionRecordStore.durationHistogram`). */
export async function durationHistogram(
  queryable: Queryable,
  owner: string,
  names: readonly string[],
  options: DurationHistogramOptions = {},
): Promise<DurationHistogram> {
  const range = perNameRange("durationHistogram", names, options);
  if (names.length === 0) return durationHistogramResult(range, []);
  const rows = await queryable.rows<DurationHistogramRow>(HISTOGRAM_SQL, [
    names,
    owner,
    range.window,
    range.since ?? Number.MIN_SAFE_INTEGER,
  ]);
  return durationHistogramResult(range, rows);
}

/**
 * `SkillExecutor.executionTimeline` over the PostgreSQL record (see
 * `ExecutionRecordStore.executionTimeline`); a missing `until` is the database's now.
 */
export async function executionTimeline(
  queryable: Queryable,
  owner: string,
  options: ExecutionTimelineOptions = {},
): Promise<ExecutionTimeline> {
  // Only a missing `until` reads "now" (the database's: one round trip more); given, it is unused.
  const now =
    options.until === undefined
      ? ((await queryable.one<{ now: number }>(`SELECT ${DATABASE_NOW} AS now`))?.now ?? Date.now())
      : Date.now();
  const range = timelineRange(options, now);
  if (range.count === 0) return timelineResult(range, []);
  const rows = await queryable.rows<ExecutionTimelineRow>(TIMELINE_SQL, [
    owner,
    range.skill,
    range.since,
    range.until,
    range.bucketMs,
    MAX_STATS_ROWS,
  ]);
  return timelineResult(range, rows);
}
