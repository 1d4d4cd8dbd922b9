import type Database from "better-sqlite3";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { ExecutionStatus } from "../types.js";
import { checkedInstant, inStatusOrder, MAX_STATS_ROWS } from "./execution-stats.js";
import { uuidV7LowerBound } from "./uuid-v7-lower-bound.js";

/** Buckets one timeline holds at most: a day of minutes. */
export const MAX_TIMELINE_BUCKETS = 1440;
/** Longest bucket accepted, in seconds: a day. */
const MAX_BUCKET_SECONDS = 86_400;
const DEFAULT_BUCKET_SECONDS = 60;
/** The range when neither end is given: the last hour. */
const DEFAULT_RANGE_MS = 60 * 60_000;

/** Options of `SkillExecutor.executionTimeline`. */
export interface ExecutionTimelineOptions {
  /** The caller (`apiKeyId`) whose executions count; no other owner's ever do (default `public`). */
  owner?: string;
  /** Start of the range, inclusive (default: an hour before `until`). */
  since?: Date | string | number;
  /** End of the range, exclusive (default: now). */
  until?: Date | string | number;
  /** Width of each bucket in whole seconds, 1 to 86 400 (default 60); at most 1440 buckets. */
  bucketSeconds?: number;
  /** Only executions of this skill name (default: every name). */
  skill?: string;
}

/** One bucket of an {@link ExecutionTimeline}: executions created in `[start, start + bucketSeconds)`. */
export interface ExecutionTimelineBucket {
  /** When the bucket starts (ISO). */
  start: string;
  /** Executions by status, in the documented order of statuses (statuses with none are left out). */
  statuses: Partial<Record<ExecutionStatus, number>>;
}

/** What `executionTimeline` answers: the caller's executions per bucket of creation time. */
export interface ExecutionTimeline {
  bucketSeconds: number;
  /** The range `[since, until)` (ISO). */
  since: string;
  until: string;
  /** Every bucket of the range, oldest first; the last one may reach past `until` (nothing after it counts). */
  buckets: ExecutionTimelineBucket[];
}

/** One (bucket, status) count of the timeline query, as every dialect's query answers it. */
export interface ExecutionTimelineRow {
  /** The bucket's index from `since`: floor((created_at - since) / bucketMs). */
  bucket: number;
  status: ExecutionStatus;
  count: number;
}

/** A timeline's checked options: the range `[since, until)` (epoch ms) and its buckets. */
export interface ExecutionTimelineRange {
  bucketSeconds: number;
  bucketMs: number;
  since: number;
  until: number;
  /** How many buckets cover the range (at most {@link MAX_TIMELINE_BUCKETS}; 0 for an empty range). */
  count: number;
  /** Only this skill name's executions; null: every name. */
  skill: string | null;
}

/** How {@link ExecutionTimelineQuery.compute} reads the range. */
export interface TimelineQueryOptions {
  /**
   * Also bound the (time-ordered) primary key by `since` (default true): holds when ids were
   * minted by the clock that stamped `created_at` (see `ExecutionQueryOptions.seekById`).
   */
  seekById?: boolean;
  /** "Now" when `until` is not given, in epoch ms (default this process's clock). */
  now?: number;
}

/**
 * One statement. The (time-ordered, UUIDv7) primary key is walked backwards from its end down to
 * the bound of `since`, so only the range's rows of every owner are read, not the owner's whole
 * history as the (owner, skill) index would; `+` keeps the planner off that index. The newest
 * {@link MAX_STATS_ROWS} rows of the owner in range are counted at most. `created_at` is the exact
 * bound at both ends: ids can run ahead of it, never behind (where they can, `@lowestId` is '' and
 * bounds nothing). Parameters are bound as REAL, hence the CAST to a whole bucket index.
 */
const TIMELINE_SQL = `
  WITH recent AS MATERIALIZED (
    SELECT created_at, status FROM skill_executions
    WHERE id >= @lowestId AND +api_key_id = @owner AND (@skill IS NULL OR +skill_name = @skill)
      AND created_at >= @since AND created_at < @until
    ORDER BY id DESC LIMIT @cap
  )
  SELECT CAST((created_at - @since) / @bucketMs AS INTEGER) AS bucket, status, COUNT(*) AS count
  FROM recent GROUP BY bucket, status`;

/**
 * The executions of one owner counted per bucket of creation time and by status (see
 * {@link ExecutionTimelineOptions}): one GROUP BY query, prepared once, over at most 1440 buckets.
 */
export class ExecutionTimelineQuery {
  private readonly statement: Database.Statement<[Record<string, unknown>], ExecutionTimelineRow>;

  constructor(database: Database.Database) {
    this.statement = database.prepare<[Record<string, unknown>], ExecutionTimelineRow>(TIMELINE_SQL);
  }

  /** The timeline of `owner`'s executions; checks every option first (`INPUT_INVALID` naming it). */
  compute(
    owner: string,
    options: ExecutionTimelineOptions,
    query: TimelineQueryOptions = {},
  ): ExecutionTimeline {
    const range = timelineRange(options, query.now ?? Date.now());
    if (range.count === 0) return timelineResult(range, []);
    const rows = this.statement.all({
      lowestId: query.seekById === false ? "" : uuidV7LowerBound(range.since - 1),
      owner,
      skill: range.skill,
      since: range.since,
      until: range.until,
      bucketMs: range.bucketMs,
      cap: MAX_STATS_ROWS,
    });
    return timelineResult(range, rows);
  }
}

/**
 * Checks a timeline's options (`INPUT_INVALID` naming the field) and resolves its range, `now`
 * standing in for a missing `until`: the same for every dialect, so they agree.
 */
export function timelineRange(options: ExecutionTimelineOptions, now: number): ExecutionTimelineRange {
  const bucketSeconds = checkedBucketSeconds(options.bucketSeconds);
  const bucketMs = bucketSeconds * 1000;
  const givenUntil = checkedInstant("executionTimeline", "until", options.until);
  const givenSince = checkedInstant("executionTimeline", "since", options.since);
  const until = givenUntil ?? (givenSince === undefined ? now : Math.max(now, givenSince));
  const since = givenSince ?? until - DEFAULT_RANGE_MS;
  if (since > until) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `executionTimeline: \`until\` (${new Date(until).toISOString()}) must not be before \`since\` (${new Date(since).toISOString()})`,
    );
  }
  const count = Math.ceil((until - since) / bucketMs);
  if (count > MAX_TIMELINE_BUCKETS) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `executionTimeline: \`bucketSeconds\` ${bucketSeconds} cuts the range into ${count} buckets, more than ${MAX_TIMELINE_BUCKETS}; ` +
        `use at least ${Math.ceil((until - since) / MAX_TIMELINE_BUCKETS / 1000)} seconds or a shorter range`,
    );
  }
  if (options.skill !== undefined && (typeof options.skill !== "string" || options.skill === "")) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `executionTimeline: \`skill\` must be a skill name, got ${JSON.stringify(options.skill)}`,
    );
  }
  return { bucketSeconds, bucketMs, since, until, count, skill: options.skill ?? null };
}

/** The answer of `executionTimeline` for `range`: every bucket, filled from any dialect's rows. */
export function timelineResult(
  range: ExecutionTimelineRange,
  rows: readonly ExecutionTimelineRow[],
): ExecutionTimeline {
  const counted: Array<Partial<Record<ExecutionStatus, number>>> = Array.from(
    { length: range.count },
    () => ({}),
  );
  for (const row of rows) {
    const bucket = counted[row.bucket];
    if (bucket !== undefined) bucket[row.status] = row.count;
  }
  return {
    bucketSeconds: range.bucketSeconds,
    since: new Date(range.since).toISOString(),
    until: new Date(range.until).toISOString(),
    buckets: counted.map((statuses, index) => ({
      start: new Date(range.since + index * range.bucketMs).toISOString(),
      statuses: inStatusOrder(statuses),
    })),
  };
}

function checkedBucketSeconds(value: number | undefined): number {
  if (value === undefined) return DEFAULT_BUCKET_SECONDS;
  if (!Number.isInteger(value) || value < 1 || value > MAX_BUCKET_SECONDS) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `executionTimeline: \`bucketSeconds\` must be a whole number of seconds from 1 to ${MAX_BUCKET_SECONDS}, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}
