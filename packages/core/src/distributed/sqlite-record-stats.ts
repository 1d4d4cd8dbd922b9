import {
  type DurationHistogram,
  type DurationHistogramOptions,
  DurationHistogramQuery,
} from "../executor/duration-histogram-query.js";
import {
  ExecutionStats,
  type SkillStatsOptions,
  type SkillStatsResult,
} from "../executor/execution-stats.js";
import {
  type ExecutionTimeline,
  type ExecutionTimelineOptions,
  ExecutionTimelineQuery,
} from "../executor/execution-timeline-query.js";
import type { SqliteRecordContext } from "./sqlite-record-context.js";
import { databaseNow } from "./sqlite-record-statements.js";

/**
 * The statistics of the shared record in SQLite: the audit trail's own queries, prepared on first
 * use. Unlike the audit trail's, skill versions are told apart by name and version (every host's
 * registry gives a version its own id), and the timeline reads the range by
 * `created_at` alone, with the database's clock for a missing `until`: ids come from processes
 * whose clocks are not the one that stamped `created_at` (see `ExecutionQueryOptions.seekById`).
 */
export class SqliteRecordStats {
  private stats: ExecutionStats | undefined;
  private timeline: ExecutionTimelineQuery | undefined;
  private histogram: DurationHistogramQuery | undefined;

  constructor(private readonly context: SqliteRecordContext) {}

  skillStats(owner: string, names: readonly string[], options: SkillStatsOptions): SkillStatsResult {
    // Rows of many hosts' registries: a version is its name and version, not one registry's id.
    this.stats ??= new ExecutionStats(this.context.database, "nameAndVersion");
    return this.stats.compute(owner, names, options);
  }

  executionTimeline(owner: string, options: ExecutionTimelineOptions): ExecutionTimeline {
    this.timeline ??= new ExecutionTimelineQuery(this.context.database);
    const now = options.until === undefined ? databaseNow(this.context.statements) : undefined;
    return this.timeline.compute(owner, options, { seekById: false, ...(now === undefined ? {} : { now }) });
  }

  durationHistogram(
    owner: string,
    names: readonly string[],
    options: DurationHistogramOptions,
  ): DurationHistogram {
    this.histogram ??= new DurationHistogramQuery(this.context.database);
    return this.histogram.compute(owner, names, options);
  }
}
