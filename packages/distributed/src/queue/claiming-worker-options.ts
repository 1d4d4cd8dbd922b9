import type { ExecutionRecordStore, SkillLogger, WorkerHeartbeat } from "@skillbox/core";
import type { ExecutionRunner } from "./execution-runner.js";

/** Options of `ClaimingWorker`. */
export interface ClaimingWorkerOptions {
  /** The queue's Redis (`SKILLBOX_QUEUE`, `redis://…`). */
  url: string;
  store: ExecutionRecordStore;
  /** The queues taken from (`default`, `sandbox`, …). */
  queues: readonly string[];
  /**
   * At most this many runs at once, across all `queues`: each queue's BullMQ worker takes a share
   * of it (16 over two queues: 8 each), so no job sits locked here while it could run elsewhere.
   */
  concurrency: number;
  /** Runs a claimed execution (the host passes the executor's `runClaimedExecution`). */
  run: ExecutionRunner;
  /** The skills this worker serves with their content hashes, for its heartbeat row (`skillbox doctor`). */
  describe(): WorkerHeartbeat["skills"] | Promise<WorkerHeartbeat["skills"]>;
  /** This worker's id in the record (default `<host>:<pid>:<random>`). */
  workerId?: string;
  /**
   * How long a claim lasts unrenewed, in ms (default 30 000); renewed every third of it (a renewal
   * unanswered after a quarter is given up and sent again). A run whose lease is about to run
   * out unrenewed is stopped (`lease-lost`), before another worker could take it over.
   */
  leaseMs?: number;
  /** How often the worker row is refreshed and the database clock measured, in ms (default 5 000). */
  heartbeatMs?: number;
  /** Prefix of every Redis key (default `skillbox`): the producers' prefix. */
  prefix?: string;
  logger?: SkillLogger;
  /** Told what became of every job taken (metrics, tests). */
  onJob?(report: ClaimingWorkerJobReport): void;
}

/**
 * What became of one job: `unavailable` (someone else holds or ended it) and `ended` (the claim
 * ended it: deadline passed, cancelled) ran nothing; `committed` / `paused` wrote the run's
 * outcome; `refused` ran but the claim was no longer current at the commit; `lease-lost` and
 * `shutdown` stopped the run and wrote nothing; `commit-failed` could not reach the database
 * while the lease held, retrying (the lease expiry recovers the execution).
 */
export interface ClaimingWorkerJobReport {
  executionId: string;
  result:
    | "unavailable"
    | "ended"
    | "committed"
    | "paused"
    | "refused"
    | "lease-lost"
    | "shutdown"
    | "commit-failed";
}

/** Options of `ClaimingWorker.close`. */
export interface ClaimingWorkerCloseOptions {
  /** How long runs under way may go on before they are stopped, in ms (default 10 000). */
  graceMs?: number;
}
