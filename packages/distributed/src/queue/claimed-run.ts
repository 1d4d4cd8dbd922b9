import type { ExecutionClaim, ExecutionRecordStore, RenewResult, SkillLogger } from "@skillbox/core";
import type { DatabaseClock } from "./database-clock.js";
import { errorMessage } from "./error-message.js";
import { type RunStopKind, runStopKind, runStopReason } from "./run-stop.js";

/** Options of {@link ClaimedRun}. */
export interface ClaimedRunOptions {
  claim: ExecutionClaim;
  store: ExecutionRecordStore;
  clock: DatabaseClock;
  leaseMs: number;
  logger: SkillLogger;
}

/** `setTimeout` takes at most a signed 32-bit delay; a farther deadline is re-armed on a later heartbeat. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Keeps one claimed execution's claim alive while it runs, and stops the run when it must end:
 * renews the lease every third of it (the database's clock decides), aborts the run's signal
 * when the claim is lost (`held: false`, a refused progress write, or the lease running out
 * unrenewed), when someone asked to cancel, or when the execution's deadline passes. Progress
 * writes are coalesced: one in flight, the latest report next.
 *
 * The lease is watched locally too: a timer at its expiry (database clock, less a tenth of the
 * lease for the clock's error) stops the run with `lease-lost` whatever the renewals are doing —
 * past that instant the sweeper may requeue the execution and another worker run it, and two runs
 * of one execution would do its side effects twice. A renewal that has not answered within a
 * quarter of the lease (a wait for a pool connection, a statement the server is slow to run) is
 * given up and another one sent soon after, so one stuck renewal cannot use up the lease.
 */
export class ClaimedRun {
  readonly claim: ExecutionClaim;
  private readonly controller = new AbortController();
  private readonly store: ExecutionRecordStore;
  private readonly clock: DatabaseClock;
  private readonly leaseMs: number;
  private readonly logger: SkillLogger;
  private currentLeaseExpiresAt: number;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private leaseTimer: NodeJS.Timeout | undefined;
  /** A renewal sent and neither answered nor given up yet. */
  private renewing: Promise<void> | undefined;
  /** A check asked for while a renewal was in flight: it runs once that one ends. */
  private checkAgain = false;
  private pendingProgress: string | undefined;
  private writingProgress: Promise<void> | undefined;
  private settled = false;

  constructor(options: ClaimedRunOptions) {
    this.claim = options.claim;
    this.store = options.store;
    this.clock = options.clock;
    this.leaseMs = options.leaseMs;
    this.logger = options.logger;
    this.currentLeaseExpiresAt = options.claim.leaseExpiresAt;
  }

  /** When the claim's lease runs out unless renewed again, on the database's clock. */
  get leaseExpiresAt(): number {
    return this.currentLeaseExpiresAt;
  }

  /** Before the lease's expiry the run is stopped this long, in ms: the local clock's view of the database's may be off. */
  private get leaseMarginMs(): number {
    return Math.max(1, Math.floor(this.leaseMs / 10));
  }

  /** Aborted when the run must stop; its reason says why ({@link runStopKind}). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the run was stopped, or undefined while it was not. */
  get stopKind(): RunStopKind | undefined {
    return runStopKind(this.controller.signal);
  }

  /** Starts the heartbeat, the lease timer and the deadline timer. */
  start(): void {
    this.armLease();
    this.armDeadline();
    this.scheduleHeartbeat(this.leaseMs / 3);
  }

  /** Stops the run (the first reason wins). */
  stop(kind: RunStopKind, message: string): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort(runStopReason(kind, message));
    // A lost claim or a shutdown ends the claim's upkeep: nothing will be written under it.
    if (kind === "lease-lost" || kind === "shutdown") this.clearTimers();
  }

  /** Renews now rather than at the next heartbeat: a cancel notice arrived, and the record tells whether it is for this claim. */
  checkNow(): void {
    if (this.settled || this.upkeepEnded()) return;
    if (this.renewing !== undefined) {
      this.checkAgain = true;
      return;
    }
    this.renewing = this.renew();
  }

  /** Queues a progress write; only the latest report waiting is written. */
  reportProgress(progressJson: string): void {
    if (this.settled || this.upkeepEnded()) return;
    this.pendingProgress = progressJson;
    if (this.writingProgress === undefined) this.startProgressWrites();
  }

  /** Ends the upkeep once the run returned: no more renewals, progress writes finished. */
  async settle(): Promise<void> {
    this.settled = true;
    this.clearTimers();
    await this.writingProgress;
  }

  private upkeepEnded(): boolean {
    const kind = this.stopKind;
    return kind === "lease-lost" || kind === "shutdown";
  }

  private scheduleHeartbeat(delayMs: number): void {
    if (this.settled || this.upkeepEnded()) return;
    this.heartbeatTimer = setTimeout(
      () => {
        this.heartbeatTimer = undefined;
        if (this.renewing === undefined) this.renewing = this.renew();
      },
      Math.max(1, Math.floor(delayMs)),
    );
    this.heartbeatTimer.unref();
  }

  /**
   * Sends one renewal and waits for it at most a quarter of the lease. Its answer counts whenever
   * it comes (a late `held: false` still stops the run; a late extension still extends), but a
   * renewal given up no longer blocks the next one.
   */
  private async renew(): Promise<void> {
    let givenUp = false;
    const answered = this.store.renew(this.claim, this.leaseMs).then(
      (result) => {
        this.applyRenewal(result);
        return true;
      },
      (error: unknown) => {
        if (!givenUp) this.renewalFailed(errorMessage(error));
        return false;
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timed-out">((resolve) => {
      timer = setTimeout(() => resolve("timed-out"), Math.max(1, Math.floor(this.leaseMs / 4)));
    });
    const outcome = await Promise.race([answered, timedOut]);
    clearTimeout(timer);
    if (outcome === "timed-out") {
      givenUp = true;
      this.renewalFailed(`no answer within ${Math.floor(this.leaseMs / 4)} ms`);
    }
    this.renewing = undefined;
    if (this.checkAgain) {
      this.checkAgain = false;
      this.checkNow();
    }
    // After a failed renewal the next one goes soon: the lease has at most two thirds left.
    if (this.heartbeatTimer === undefined && this.renewing === undefined)
      this.scheduleHeartbeat(outcome === true ? this.leaseMs / 3 : this.leaseMs / 10);
  }

  private applyRenewal(result: RenewResult): void {
    const { executionId, fence } = this.claim;
    if (!result.held) {
      this.stop(
        "lease-lost",
        `The claim of execution ${executionId} (fence ${fence}) is no longer current: another claim took it over, so this run's outcome is not written`,
      );
      return;
    }
    // Renewals may answer out of order (one given up, a later one sent): the farthest lease stands.
    if (result.leaseExpiresAt !== null && result.leaseExpiresAt > this.currentLeaseExpiresAt)
      this.currentLeaseExpiresAt = result.leaseExpiresAt;
    if (result.cancelRequested)
      this.stop("cancelled", result.cancelReason ?? `Execution ${executionId} was cancelled`);
    this.armLease();
    this.armDeadline();
  }

  private renewalFailed(reason: string): void {
    // The database is away or slow: the run goes on while the lease holds; the lease timer stops
    // it before the lease runs out, as another worker may recover the execution then.
    this.logger.warn("could not renew the lease of a running execution", {
      executionId: this.claim.executionId,
      error: reason,
    });
  }

  private armLease(): void {
    if (this.leaseTimer !== undefined) clearTimeout(this.leaseTimer);
    this.leaseTimer = undefined;
    if (this.settled || this.upkeepEnded()) return;
    const remaining = this.clock.msUntil(this.currentLeaseExpiresAt) - this.leaseMarginMs;
    if (remaining <= 0) {
      this.stop(
        "lease-lost",
        `The lease of execution ${this.claim.executionId} (fence ${this.claim.fence}) is running out unrenewed: past it another worker may run it, so this run stops and its outcome is not written`,
      );
      return;
    }
    // On firing, armLease looks again: a renewal may have moved the lease meanwhile.
    this.leaseTimer = setTimeout(
      () => {
        this.leaseTimer = undefined;
        this.armLease();
      },
      Math.min(remaining, MAX_TIMER_MS),
    );
    this.leaseTimer.unref();
  }

  private armDeadline(): void {
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    const { deadlineAt, executionId } = this.claim;
    if (deadlineAt === null || this.settled || this.controller.signal.aborted) return;
    const stopAtDeadline = () =>
      this.stop(
        "deadline",
        `Execution ${executionId} ran past its deadline (${new Date(deadlineAt).toISOString()})`,
      );
    const remaining = this.clock.msUntil(deadlineAt);
    if (remaining <= 0) {
      stopAtDeadline();
      return;
    }
    this.deadlineTimer = setTimeout(
      () => {
        this.deadlineTimer = undefined;
        if (this.clock.msUntil(deadlineAt) <= 0) stopAtDeadline();
        else this.armDeadline();
      },
      Math.min(remaining, MAX_TIMER_MS),
    );
    this.deadlineTimer.unref();
  }

  private startProgressWrites(): void {
    this.writingProgress = this.writeProgress().finally(() => {
      this.writingProgress = undefined;
      // A report that came in as the last write ended.
      if (this.pendingProgress !== undefined && !this.settled && !this.upkeepEnded())
        this.startProgressWrites();
    });
  }

  private async writeProgress(): Promise<void> {
    while (this.pendingProgress !== undefined && !this.upkeepEnded()) {
      const progressJson = this.pendingProgress;
      this.pendingProgress = undefined;
      try {
        if (!(await this.store.recordProgress(this.claim, progressJson))) {
          this.stop(
            "lease-lost",
            `The claim of execution ${this.claim.executionId} (fence ${this.claim.fence}) is no longer current: its progress was refused`,
          );
        }
      } catch (error) {
        // Progress is advisory: a failed write is dropped, the next report tries again.
        this.logger.warn("could not store the progress of a running execution", {
          executionId: this.claim.executionId,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
  }

  private clearTimers(): void {
    if (this.heartbeatTimer !== undefined) clearTimeout(this.heartbeatTimer);
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    if (this.leaseTimer !== undefined) clearTimeout(this.leaseTimer);
    this.heartbeatTimer = undefined;
    this.deadlineTimer = undefined;
    this.leaseTimer = undefined;
  }
}
