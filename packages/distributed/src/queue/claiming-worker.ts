import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { ClaimResult, ExecutionClaim, ExecutionRecordStore } from "@skillbox/core";
import { createConsoleLogger, type SkillLogger } from "@skillbox/core";
import { type Job, Worker } from "bullmq";
import { assertRedisNoEviction } from "./assert-redis-no-eviction.js";
import { ClaimedRun } from "./claimed-run.js";
import type {
  ClaimingWorkerCloseOptions,
  ClaimingWorkerJobReport,
  ClaimingWorkerOptions,
} from "./claiming-worker-options.js";
import { commitRunResult } from "./commit-run-result.js";
import { connectQueueRedis, queueRedisOptions } from "./connect-queue-redis.js";
import { DatabaseClock } from "./database-clock.js";
import { errorMessage } from "./error-message.js";
import type { ExecutionJobData } from "./execution-job.js";
import type { RunResult } from "./execution-runner.js";
import { checkQueueName, checkQueuePrefix, DEFAULT_QUEUE_PREFIX } from "./queue-name.js";
import { RunSlots } from "./run-slots.js";
import { settleWithin } from "./settle-within.js";
import { splitConcurrency } from "./split-concurrency.js";
import { thrownOutcome } from "./thrown-outcome.js";

export type { ClaimingWorkerCloseOptions, ClaimingWorkerJobReport, ClaimingWorkerOptions };

const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_HEARTBEAT_MS = 5_000;
const DEFAULT_GRACE_MS = 10_000;
/** After the grace period runs are aborted; this long more for them to return before the queues close regardless. */
const ABORTED_RUNS_WAIT_MS = 5_000;

/**
 * The consumer side of dispatch: BullMQ workers on the given queues hand each job to the record,
 * which decides. A job is only a hint that an execution may be ready: the worker claims the
 * record (compare-and-set with a fencing counter); a job whose execution someone else holds or
 * that ended completes doing nothing, so a job delivered twice — BullMQ delivers at least once —
 * runs once. A claimed execution runs through `run` under a lease renewed on the database's
 * clock; its outcome is written only under its claim, so a worker that lost the claim (paused,
 * partitioned) can never overwrite a newer outcome. Cancel notices from any host stop a run at
 * once; the heartbeat is the polling fallback.
 */
export class ClaimingWorker {
  readonly workerId: string;
  private readonly options: ClaimingWorkerOptions;
  private readonly store: ExecutionRecordStore;
  private readonly logger: SkillLogger;
  private readonly leaseMs: number;
  private readonly heartbeatMs: number;
  private readonly prefix: string;
  private readonly queues: readonly string[];
  private readonly slots: RunSlots;
  private readonly clock: DatabaseClock;
  private readonly workers: Worker<ExecutionJobData>[] = [];
  /** Runs under way by execution id: cancel notices and shutdown find them here. */
  private readonly runs = new Map<string, ClaimedRun>();
  /** Jobs being processed (also those waiting for a slot), so close() can wait for them. */
  private readonly processing = new Set<Promise<void>>();
  /**
   * Executions whose claim is in flight, with whether a cancel notice came meanwhile: a cancel
   * committed just after the claim may be told before the claim's answer is back, when the run
   * is not in `runs` yet; the run checks for it once it starts.
   */
  private readonly claiming = new Map<string, { claims: number; cancelNoticed: boolean }>();
  /** Set once the shutdown's grace ran out: commits still retrying give up (the lease recovers them). */
  private abandonCommits = false;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => Promise<void>) | undefined;
  private startedAt = 0;
  private started = false;
  private closing: Promise<void> | undefined;

  constructor(options: ClaimingWorkerOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new RangeError(`concurrency must be a whole number of at least 1, got ${options.concurrency}`);
    }
    if (options.queues.length === 0) throw new RangeError("A worker needs at least one queue to take from");
    this.options = options;
    this.store = options.store;
    this.logger = options.logger ?? createConsoleLogger();
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.prefix = checkQueuePrefix(options.prefix ?? DEFAULT_QUEUE_PREFIX);
    this.queues = [...new Set(options.queues.map(checkQueueName))];
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.slots = new RunSlots(options.concurrency);
    this.clock = new DatabaseClock(options.store);
    // Checked here so a bad URL fails at construction, not in a reconnect loop.
    queueRedisOptions(options.url, { role: "worker" });
  }

  /** How many runs are under way. */
  get running(): number {
    return this.runs.size;
  }

  /**
   * Refuses an evicting Redis (`QUEUE_EVICTING`), records the worker's row, listens for cancel
   * notices and starts taking jobs.
   */
  async start(): Promise<void> {
    if (this.started) throw new Error("The worker is started already");
    this.started = true;
    const probe = connectQueueRedis(this.options.url, { role: "worker" });
    try {
      await assertRedisNoEviction(probe);
    } finally {
      await probe.quit().catch(() => probe.disconnect());
    }
    await this.clock.measure();
    this.startedAt = this.clock.now();
    await this.heartbeat();
    try {
      this.unsubscribe = await this.store.subscribe((notice) => {
        if (notice.type !== "cancel") return;
        const claiming = this.claiming.get(notice.executionId);
        if (claiming !== undefined) claiming.cancelNoticed = true;
        this.runs.get(notice.executionId)?.checkNow();
      });
    } catch (error) {
      this.logger.warn(
        "could not listen for cancel notices; cancels reach running executions at their next heartbeat",
        {
          error: errorMessage(error),
        },
      );
    }
    this.scheduleHeartbeat();
    const connection = queueRedisOptions(this.options.url, { role: "worker" });
    const shares = splitConcurrency(this.options.concurrency, this.queues.length);
    for (const [index, queue] of this.queues.entries()) {
      const worker = new Worker<ExecutionJobData>(queue, (job) => this.track(job), {
        connection,
        prefix: this.prefix,
        concurrency: shares[index] ?? 1,
        name: this.workerId,
        // A dead worker's job stays `active` in BullMQ until its lock expires and a stall check
        // moves it back, and until then a re-add of the id (the sweeper's requeue) is a no-op: the
        // lock and the check follow the lease, so a requeued rerun waits for the lease, not 30 s.
        lockDuration: this.leaseMs,
        stalledInterval: this.leaseMs,
      });
      // Without a listener an 'error' event would throw; Redis restarts report many.
      worker.on("error", (error) =>
        this.logger.debug("a queue worker reported an error", { queue, error: error.message }),
      );
      // Only a claim that could not reach the database fails a job: the record stays `queued`,
      // and the sweeper adds the job again once it is stale.
      worker.on("failed", (job, error) =>
        this.logger.warn("could not claim an execution; the sweeper adds its job again", {
          executionId: job?.id,
          error: error.message,
        }),
      );
      this.workers.push(worker);
    }
  }

  /**
   * Stops taking jobs, lets runs under way finish for up to `graceMs`, then stops them (nothing
   * is written for them: their leases expire and the sweeper recovers them), closes the queue
   * connections and forgets the worker's row.
   */
  close(options: ClaimingWorkerCloseOptions = {}): Promise<void> {
    this.closing ??= this.shutDown(options.graceMs ?? DEFAULT_GRACE_MS);
    return this.closing;
  }

  private async shutDown(graceMs: number): Promise<void> {
    this.slots.close();
    if (this.heartbeatTimer !== undefined) clearTimeout(this.heartbeatTimer);
    await Promise.allSettled(this.workers.map((worker) => worker.pause(true)));
    let settled = await settleWithin(this.processing, graceMs);
    if (!settled) {
      this.abandonCommits = true;
      for (const run of this.runs.values()) {
        run.stop(
          "shutdown",
          `Worker ${this.workerId} is shutting down; the execution is recovered once its lease expires`,
        );
      }
      settled = await settleWithin(this.processing, ABORTED_RUNS_WAIT_MS);
    }
    // Force only when a run ignores its signal: its BullMQ job is then handed on by the stalled check.
    await Promise.allSettled(this.workers.map((worker) => worker.close(!settled)));
    await this.unsubscribe?.().catch((error: unknown) => {
      this.logger.warn("could not stop listening for notices", { error: errorMessage(error) });
    });
    if (this.started) {
      await this.store.removeWorker(this.workerId).catch((error: unknown) => {
        this.logger.warn("could not remove the worker's row; it ages out of `skillbox doctor`", {
          error: errorMessage(error),
        });
      });
    }
  }

  private track(job: Job<ExecutionJobData>): Promise<void> {
    const processing = this.process(job);
    this.processing.add(processing);
    const forget = () => this.processing.delete(processing);
    processing.then(forget, forget);
    return processing;
  }

  private async process(job: Job<ExecutionJobData>): Promise<void> {
    const executionId = job.id ?? job.data.executionId;
    let release: () => void;
    try {
      release = await this.slots.acquire();
    } catch {
      // Closing: the record stays `queued` and the sweeper adds the job again for another worker.
      return;
    }
    try {
      const claiming = this.claiming.get(executionId) ?? { claims: 0, cancelNoticed: false };
      claiming.claims++;
      this.claiming.set(executionId, claiming);
      let result: ClaimResult;
      try {
        result = await this.store.claim({ executionId, workerId: this.workerId, leaseMs: this.leaseMs });
      } finally {
        if (--claiming.claims === 0) this.claiming.delete(executionId);
      }
      if (result.kind !== "claimed") {
        this.report(executionId, result.kind);
        return;
      }
      await this.runClaimed(result.claim, claiming.cancelNoticed);
    } finally {
      release();
    }
  }

  private async runClaimed(claim: ExecutionClaim, cancelNoticed: boolean): Promise<void> {
    const { executionId } = claim;
    const run = new ClaimedRun({
      claim,
      store: this.store,
      clock: this.clock,
      leaseMs: this.leaseMs,
      logger: this.logger,
    });
    this.runs.set(executionId, run);
    const started = performance.now();
    let result: RunResult | undefined;
    let thrown: unknown;
    try {
      run.start();
      // The record tells whether the cancel noticed during the claim is for this claim.
      if (cancelNoticed) run.checkNow();
      result = await this.options.run(claim, {
        signal: run.signal,
        reportProgress: (progressJson) => run.reportProgress(progressJson),
      });
    } catch (error) {
      thrown = error;
    } finally {
      await run.settle();
      this.runs.delete(executionId);
    }
    const stop = run.stopKind;
    if (stop === "lease-lost" || stop === "shutdown") {
      this.logger.warn(
        stop === "lease-lost"
          ? "a run lost its claim; its outcome is not written"
          : "a run was stopped by the shutdown; its lease expiry recovers it",
        { executionId, fence: claim.fence },
      );
      this.report(executionId, stop);
      return;
    }
    if (thrown !== undefined) {
      this.logger.error("a run threw instead of returning an outcome; it is recorded as an error", {
        executionId,
        error: errorMessage(thrown),
      });
    }
    const durationMs = Math.round(performance.now() - started);
    const outcome = result ?? {
      kind: "final" as const,
      outcome: thrownOutcome(claim, run, thrown, durationMs),
    };
    const committed = await commitRunResult({
      store: this.store,
      clock: this.clock,
      logger: this.logger,
      claim,
      result: outcome,
      leaseExpiresAt: run.leaseExpiresAt,
      abandoned: () => this.abandonCommits,
    });
    this.report(executionId, committed);
  }

  private scheduleHeartbeat(): void {
    this.heartbeatTimer = setTimeout(async () => {
      try {
        await this.clock.measure();
        await this.heartbeat();
      } catch (error) {
        this.logger.warn("could not record the worker's heartbeat", { error: errorMessage(error) });
      }
      if (this.closing === undefined) this.scheduleHeartbeat();
    }, this.heartbeatMs);
    this.heartbeatTimer.unref();
  }

  private async heartbeat(): Promise<void> {
    await this.store.heartbeatWorker({
      workerId: this.workerId,
      host: hostname(),
      pid: process.pid,
      queues: this.queues,
      skills: await this.options.describe(),
      concurrency: this.options.concurrency,
      running: this.runs.size,
      startedAt: this.startedAt,
    });
  }

  private report(executionId: string, result: ClaimingWorkerJobReport["result"]): void {
    try {
      this.options.onJob?.({ executionId, result });
    } catch (error) {
      this.logger.warn("an onJob callback threw", { error: errorMessage(error) });
    }
  }
}
