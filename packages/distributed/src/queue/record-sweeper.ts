import type { ExecutionRecordStore } from "@skillbox/core";
import { createConsoleLogger, type SkillLogger } from "@skillbox/core";
import { errorMessage } from "./error-message.js";
import type { ExecutionJob } from "./execution-job.js";

/** Where the sweeper adds jobs again: an `ExecutionJobQueue`, or anything that adds as it does. */
export interface SweeperJobQueue {
  add(jobs: readonly ExecutionJob[]): Promise<void>;
}

/** Options of {@link RecordSweeper}. */
export interface RecordSweeperOptions {
  store: ExecutionRecordStore;
  queue: SweeperJobQueue;
  /** How often it sweeps, in ms (default 1 000). */
  intervalMs?: number;
  /** A `queued` execution whose job was added longer ago than this is added again, in ms (default 5 000). */
  staleAfterMs?: number;
  /** At most this many executions of each kind per sweep (default 500): a backlog is worked off over several sweeps. */
  limit?: number;
  /**
   * A worker whose heartbeat is older than this is forgotten (its row in `skillbox_workers`
   * deleted), in ms (default a day): a killed worker never removes its own row.
   */
  forgetWorkersAfterMs?: number;
  logger?: SkillLogger;
}

/** What one sweep did. */
export interface SweepReport {
  /** Executions whose expired lease put them back to `queued`, their jobs added again. */
  requeued: number;
  /** Executions ended by an expired lease or approval, or a deadline that passed while they were queued. */
  ended: number;
  /** Stale `queued` executions whose jobs were added again. */
  readded: number;
  /** Workers forgotten for a heartbeat older than `forgetWorkersAfterMs`. */
  forgottenWorkers: number;
  /** Steps that failed this time (logged; the next sweep tries again). */
  failures: number;
}

/** How often the workers' rows are checked for stale ones: rows age in days, not seconds. */
const FORGET_WORKERS_EVERY_MS = 10 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Heals what the queue lost or never got, on an interval: running executions whose worker's
 * lease expired are recovered by the record (requeued where the skill may run again — their jobs
 * added again here — else ended `interrupted`; approvals past their deadline end `rejected`;
 * queued executions past their deadline, which no worker serving their queue took, end `timeout`), and
 * `queued` executions whose job was added long ago (lost between the commit and the add, or with
 * a restarted Redis) are added again. Adding an id the queue still holds is a no-op and every
 * recovery is a compare-and-set in the record, so every host may run a sweeper at once. It also
 * forgets workers whose heartbeat stopped a day ago (killed processes leave their rows). Errors
 * are logged, never thrown out of the timer.
 */
export class RecordSweeper {
  private readonly store: ExecutionRecordStore;
  private readonly queue: SweeperJobQueue;
  private readonly intervalMs: number;
  private readonly staleAfterMs: number;
  private readonly limit: number;
  private readonly forgetWorkersAfterMs: number;
  /** When (this host's clock, only to space the checks) the workers' rows were last checked. */
  private workersCheckedAt: number | undefined;
  private readonly logger: SkillLogger;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<SweepReport> | undefined;
  private closed = false;

  constructor(options: RecordSweeperOptions) {
    this.store = options.store;
    this.queue = options.queue;
    this.intervalMs = options.intervalMs ?? 1000;
    this.staleAfterMs = options.staleAfterMs ?? 5000;
    this.limit = options.limit ?? 500;
    this.forgetWorkersAfterMs = options.forgetWorkersAfterMs ?? DAY_MS;
    this.logger = options.logger ?? createConsoleLogger();
  }

  /** Starts sweeping on the interval (the timer does not keep the process alive). */
  start(): void {
    if (this.closed || this.timer !== undefined) return;
    this.schedule();
  }

  /**
   * Sweeps once now (also what the timer runs). A sweep asked for while one runs joins it rather
   * than running alongside it.
   */
  sweep(): Promise<SweepReport> {
    this.sweeping ??= this.sweepOnce().finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  /** Stops the timer and waits for a sweep under way. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  private schedule(): void {
    // A timeout chain rather than an interval: a slow sweep delays the next, never overlaps it.
    this.timer = setTimeout(async () => {
      await this.sweep();
      if (!this.closed) this.schedule();
    }, this.intervalMs);
    this.timer.unref();
  }

  private async sweepOnce(): Promise<SweepReport> {
    const report: SweepReport = { requeued: 0, ended: 0, readded: 0, forgottenWorkers: 0, failures: 0 };
    try {
      const recovered = await this.store.recoverExpired({ limit: this.limit });
      const requeued = recovered.filter((execution) => execution.action === "requeued");
      report.ended = recovered.length - requeued.length;
      if (requeued.length > 0) {
        // Added at once rather than at the stale pass, so a rerun waits one sweep, not staleAfterMs.
        report.requeued = await this.readd(
          requeued.map(({ id, queue, contentHash }) => ({ executionId: id, queue, contentHash })),
        );
      }
    } catch (error) {
      report.failures++;
      this.logger.warn("could not recover executions with expired leases", { error: errorMessage(error) });
    }
    if (this.closed) return report;
    try {
      const stale = await this.store.staleQueued({ olderThanMs: this.staleAfterMs, limit: this.limit });
      if (stale.length > 0) {
        report.readded = await this.readd(
          stale.map(({ id, queue, contentHash }) => ({ executionId: id, queue, contentHash })),
        );
      }
    } catch (error) {
      report.failures++;
      this.logger.warn("could not add stale queued executions again", { error: errorMessage(error) });
    }
    await this.forgetStaleWorkers(report);
    return report;
  }

  /** Deletes the rows of workers that stopped heartbeating long ago (the first sweep, then every few minutes). */
  private async forgetStaleWorkers(report: SweepReport): Promise<void> {
    const checkedAt = Date.now();
    if (this.workersCheckedAt !== undefined && checkedAt - this.workersCheckedAt < FORGET_WORKERS_EVERY_MS)
      return;
    this.workersCheckedAt = checkedAt;
    try {
      report.forgottenWorkers = await this.store.removeStaleWorkers({
        olderThanMs: this.forgetWorkersAfterMs,
      });
    } catch (error) {
      report.failures++;
      this.logger.warn("could not forget workers that stopped heartbeating", { error: errorMessage(error) });
    }
  }

  /** Adds the jobs and notes it in the record; throws when either fails (the rows stay stale, the next sweep retries). */
  private async readd(jobs: ExecutionJob[]): Promise<number> {
    await this.queue.add(jobs);
    await this.store.markEnqueued(jobs.map((job) => job.executionId));
    return jobs.length;
  }
}
