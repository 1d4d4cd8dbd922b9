import type { DurationHistogram, DurationHistogramOptions } from "../executor/duration-histogram-query.js";
import type { SkillStatsOptions, SkillStatsResult } from "../executor/execution-stats.js";
import type { ExecutionFilters } from "../executor/execution-store.js";
import type { ExecutionSummary, ExecutionSummaryOptions } from "../executor/execution-summary.js";
import type { ExecutionTimeline, ExecutionTimelineOptions } from "../executor/execution-timeline-query.js";
import type { ExecutionApproval, ExecutionStatus, SkillExecution } from "../types.js";

/**
 * The shared record of executions that several hosts dispatch and run: the audit trail plus what
 * a queued execution runs with (its raw input in a side table, never in the audited columns),
 * claims with a fencing counter, leases on the database's clock, cancel requests and worker
 * heartbeats. Two implementations keep the same tables and the same behaviour: SQLite (one file,
 * several processes on one machine) and PostgreSQL (`@skillbox/distributed`, many hosts). The
 * store contract suite (`@skillbox/test-helpers/record-store-contract`) runs against both.
 *
 * Every time a method compares or stamps (`now`, leases, deadlines, `finishedAt`) comes from the
 * database's clock, never a host's: hosts' clocks disagree, the database is one.
 * Every method is safe to call from many processes at once; the ones that change a claimed
 * execution are guarded by its claim (`executionId` + `fence`) and answer `false` when the claim
 * is no longer the current one, so a worker that lost its lease can never overwrite a newer outcome.
 */
export interface ExecutionRecordStore {
  /** `sqlite` or `postgres`. */
  readonly dialect: "sqlite" | "postgres";
  /**
   * Brings the schema to the newest version. Serialised across processes (an immediate
   * transaction on SQLite, an advisory lock on PostgreSQL): concurrent starts apply each migration once.
   */
  migrate(): Promise<void>;
  /** The database clock, in ms since the epoch. */
  now(): Promise<number>;

  /**
   * Records a submitted execution as `queued` with its raw input (side table); its deadline is
   * `totalTimeoutMs` after the database's now (its `created_at`), never a host's clock. With an
   * idempotency key that the owner used before, nothing is written and the existing execution
   * comes back (with its input hash, for the caller to compare).
   */
  insertQueued(record: QueuedExecutionRecord): Promise<InsertQueuedResult>;
  /** Notes that the jobs of `ids` were added to the queue (the sweeper re-adds what was not). */
  markEnqueued(ids: readonly string[]): Promise<void>;
  /**
   * Executions still `queued` whose job was last added more than `olderThanMs` ago (or never):
   * the sweeper adds them again (adding a job id the queue holds is a no-op there), oldest first.
   */
  staleQueued(options: StaleQueuedOptions): Promise<StaleQueuedExecution[]>;

  /** Where the job of a queued execution goes: its queue and content hash (undefined once it has no job). */
  dispatchTarget(id: string): Promise<DispatchTarget | undefined>;
  /**
   * The key idempotent repeats are hashed under (HMAC), created on first use and shared by every
   * host on the database: an unkeyed hash of a low-entropy input could be guessed.
   */
  inputHashKey(): Promise<Buffer>;

  /** One execution, or undefined (also when `owner` is given and does not own it). */
  get(id: string, owner?: string): Promise<SkillExecution | undefined>;
  /** Same filters, order (newest first) and page limits as the SQLite audit trail's `list`. */
  list(filters?: ExecutionFilters): Promise<SkillExecution[]>;
  count(filters?: ExecutionFilters): Promise<number>;
  listSummaries(filters?: ExecutionFilters & ExecutionSummaryOptions): Promise<ExecutionSummary[]>;
  /**
   * `SkillExecutor.skillStats` over the shared record: per skill version, over each name of
   * `names`' most recent `window` executions by `owner` (default 1000, shrunk so one query reads
   * at most 200 000 rows; newest by the database clock's `created_at`), those created at or after
   * `since`: counts by status, the success rate among finished ones, nearest-rank p50/p95
   * durations. A version is its name and version, not a `skillId`: every host's registry gives
   * the same version an id of its own (`skillId` is the least of those it ran under; the executor
   * names entries by its own registry). `options.owner`/`skills` are ignored (`owner` and `names`
   * say it); no other owner's executions ever count. One bounded query; both dialects answer
   * alike for the same rows.
   */
  skillStats(owner: string, names: readonly string[], options?: SkillStatsOptions): Promise<SkillStatsResult>;
  /**
   * `SkillExecutor.executionTimeline` over the shared record: `owner`'s executions counted per
   * bucket of `created_at` and by status over `[since, until)` (default the last hour before the
   * database's now, 60 s buckets, at most 1440), every bucket present oldest first; at most the
   * newest 200 000 in range count. `options.owner` is ignored. One bounded query.
   */
  executionTimeline(owner: string, options?: ExecutionTimelineOptions): Promise<ExecutionTimeline>;
  /**
   * `SkillExecutor.durationHistogram` over the shared record: per name of `names`, over the same
   * window as {@link skillStats}, the finished executions with a duration counted in the buckets
   * of `DURATION_HISTOGRAM_BOUNDS_MS` (every bucket present), with nearest-rank p50/p95; names
   * with none are left out. `options.owner`/`skills` are ignored. One bounded query.
   */
  durationHistogram(
    owner: string,
    names: readonly string[],
    options?: DurationHistogramOptions,
  ): Promise<DurationHistogram>;
  /** An owner's execution by idempotency key, with the hash of the input it was first called with. */
  findByIdempotencyKey(
    owner: string,
    key: string,
  ): Promise<{ execution: SkillExecution; inputHash: string | null } | undefined>;

  /**
   * Claims a queued execution for a worker, in one transaction: status `running`, `fence` one
   * higher, lease until now + `leaseMs`. An execution whose deadline passed ends `timeout`
   * (code `DEADLINE_EXCEEDED`) instead and one asked to cancel ends `cancelled`: both answer `ended`.
   * Anything not `queued` (running under another claim, awaiting approval, final, unknown) is `unavailable`.
   */
  claim(options: ClaimOptions): Promise<ClaimResult>;
  /**
   * Extends the lease of a current claim (the worker's heartbeat) and tells whether someone asked
   * to cancel it. `held: false` when the claim is no longer current: the worker must stop the run
   * and write nothing.
   */
  renew(claim: ClaimToken, leaseMs: number): Promise<RenewResult>;
  /**
   * Records a nested `ctx.call` execution that ran and ended on a worker (in its own audit trail)
   * in the shared record: one final row with every audit column as the worker's row has it —
   * parent, session, the input and output as audited, error, attempts, duration, trace and span,
   * its own `createdAt` / `finishedAt` (the worker's clock: it ran there, nobody compares them to
   * a lease) — and `contentHash`, the code that ran. Its final status event is appended and told
   * to subscribers, as a finish would. Idempotent on the id: a repeat (a worker that retries after
   * an unanswered commit) writes nothing and changes nothing. `INPUT_INVALID` for a status that
   * is not final: nothing runs a nested execution in the shared record.
   */
  recordNested(execution: SkillExecution, options: { contentHash: string }): Promise<void>;
  /** Commits the final state of a claimed execution and drops its raw input; false when the claim is not current. */
  finish(claim: ClaimToken, outcome: FinalOutcome): Promise<boolean>;
  /** Stores the latest progress of a claimed execution (and tells subscribers); false when the claim is not current. */
  recordProgress(claim: ClaimToken, progressJson: string): Promise<boolean>;
  /**
   * Stops a claimed execution at `awaiting_approval` (the raw input stays for the run after the
   * decision); false when the claim is not current. The approval is stamped on the database's
   * clock: `requestedAt` is its now and the deadline (`approval.expiresAt` and the job's
   * `approval_expires_at`) `approvalTimeoutMs` after it, whatever the worker's clock put there.
   */
  pause(claim: ClaimToken, pause: PauseOptions): Promise<boolean>;
  /**
   * Approves an execution awaiting approval: back to `queued` (job to be added again), with the
   * edited input when given. Undefined when it was not awaiting approval (or `owner` does not own
   * it), and when its approval deadline has passed by the database clock: then it ends `rejected`
   * (`APPROVAL_EXPIRED`, decision `expired`) in the same transaction, as `recoverExpired` would
   * end it, and the caller reads that record to answer `APPROVAL_EXPIRED`.
   */
  approve(options: ApproveRecordOptions): Promise<SkillExecution | undefined>;
  /**
   * Ends an execution nobody runs (`queued` or `awaiting_approval`, as `from` allows) with a final
   * status and error: a cancel before it started, a rejection, an expired approval, a version
   * mismatch. Undefined when it was in none of `from` (or `owner` does not own it).
   */
  endUnclaimed(options: EndUnclaimedOptions): Promise<SkillExecution | undefined>;
  /**
   * Asks for an execution to stop. Queued or awaiting approval: it ends `cancelled` at once
   * (`ended`). Running: the request is stored and its worker told (`requested`; the worker ends it).
   * Final: `final`. Unknown or not the owner's: `unknown`.
   */
  requestCancel(options: RequestCancelOptions): Promise<CancelRequestResult>;
  /**
   * Ends or requeues running executions whose lease expired (their worker died, paused or lost
   * the database): an execution of a rerunnable skill goes back to `queued` with a higher fence,
   * at most {@link MAX_LEASE_REQUEUES} times (a skill that kills its worker each time, out of
   * memory say, must not loop for ever); any other, or one requeued that often already, ends
   * `interrupted` (code `INTERRUPTED`). Each lost lease counts one attempt, so the next run's
   * `ctx.attempt` moves on. Awaiting approvals past their deadline end `rejected`
   * (`APPROVAL_EXPIRED`); queued executions past their deadline (no worker took their queue in
   * time) end `timeout` (`DEADLINE_EXCEEDED`). At most `limit` of each.
   */
  recoverExpired(options: RecoverExpiredOptions): Promise<RecoveredExecution[]>;

  /** Records a worker's heartbeat: who it is, what it serves (skills with their content hashes). */
  heartbeatWorker(worker: WorkerHeartbeat): Promise<void>;
  /** Forgets a worker that stopped. */
  removeWorker(workerId: string): Promise<void>;
  /**
   * Forgets the workers whose last heartbeat is older than `olderThanMs` by the database clock
   * (killed processes never remove their rows); resolves with how many were forgotten.
   */
  removeStaleWorkers(options: { olderThanMs: number }): Promise<number>;
  /** The workers with a heartbeat in the last `withinMs`, newest first, with the age by the database clock. */
  listWorkers(options?: ListWorkersOptions): Promise<WorkerRecord[]>;

  /**
   * Calls `listener` for every change of any execution, from any process: status changes,
   * progress, cancel requests (PostgreSQL `LISTEN/NOTIFY`; SQLite polls). Notices are hints: read
   * the record for the truth. Resolves once listening; the returned function stops it.
   */
  subscribe(listener: (notice: RecordNotice) => void): Promise<() => Promise<void>>;
  /** Closes the connections (pending notices are dropped). */
  close(): Promise<void>;
}

/**
 * How many times `recoverExpired` puts a rerunnable execution whose lease expired back in the
 * queue; the next lost lease ends it `interrupted`.
 */
export const MAX_LEASE_REQUEUES = 3;

/** Options of {@link ExecutionRecordStore.staleQueued}. */
export interface StaleQueuedOptions {
  olderThanMs: number;
  limit: number;
}

/** Where a queued execution's job goes (see {@link ExecutionRecordStore.dispatchTarget}). */
export interface DispatchTarget {
  queue: string;
  contentHash: string;
}

/** Options of {@link ExecutionRecordStore.claim}. */
export interface ClaimOptions {
  executionId: string;
  workerId: string;
  leaseMs: number;
}

/** What {@link ExecutionRecordStore.pause} stores of a run stopped for approval. */
export interface PauseOptions {
  /** The request (`decision: null`); its `requestedAt` and `expiresAt` are stamped again on the database clock. */
  approval: ExecutionApproval;
  /** How long the approval may wait, in ms from the database's now; null for ever. */
  approvalTimeoutMs: number | null;
  attempts: number;
}

/** Options of {@link ExecutionRecordStore.approve}. */
export interface ApproveRecordOptions {
  id: string;
  owner?: string;
  approval: ExecutionApproval;
  rawInputJson?: string;
  auditedInputJson?: string;
}

/** Options of {@link ExecutionRecordStore.endUnclaimed}. */
export interface EndUnclaimedOptions {
  id: string;
  owner?: string;
  from: readonly ("queued" | "awaiting_approval")[];
  status: ExecutionStatus;
  code: string;
  message: string;
  approval?: ExecutionApproval;
}

/** Options of {@link ExecutionRecordStore.requestCancel}. */
export interface RequestCancelOptions {
  id: string;
  owner?: string;
  reason: string | null;
}

/** Options of {@link ExecutionRecordStore.recoverExpired}. */
export interface RecoverExpiredOptions {
  limit: number;
}

/** Options of {@link ExecutionRecordStore.listWorkers}. */
export interface ListWorkersOptions {
  withinMs?: number;
}

/** A submitted execution as {@link ExecutionRecordStore.insertQueued} writes it. */
export interface QueuedExecutionRecord {
  id: string;
  skillId: string;
  skillName: string;
  skillVersion: string;
  /** sha256 of the skill's manifest and code as the submitting host loaded it: a worker with another answers `SKILL_VERSION_MISMATCH`. */
  contentHash: string;
  /** The queue it goes to (`default` unless the skill names one). */
  queue: string;
  apiKeyId: string;
  sessionId: string | null;
  parentExecutionId: string | null;
  idempotencyKey: string | null;
  /** The input as the audit trail keeps it (redacted by `audit` hooks). */
  auditedInputJson: string | null;
  /** The caller's input as it will run: kept in the side table until the execution ends. */
  rawInputJson: string | null;
  inputHash: string | null;
  /** The call's options that outlive it (`JobOptions` as JSON: timeouts, retries, trace parent). */
  optionsJson: string;
  /**
   * The call's `totalTimeoutMs`, or null: the deadline is this long after the database's now at
   * the insert (a queued one past it never starts). A duration, not a time: the submitting host's
   * clock must not decide it.
   */
  totalTimeoutMs: number | null;
  /** Whether the skill may run again after a lost lease (it opted into rerun). */
  rerunnable: boolean;
}

/** What {@link ExecutionRecordStore.insertQueued} did. */
export type InsertQueuedResult =
  | { inserted: true; execution: SkillExecution }
  | { inserted: false; existing: SkillExecution; inputHash: string | null };

/** A queued execution the sweeper adds to the queue again. */
export interface StaleQueuedExecution {
  id: string;
  queue: string;
  contentHash: string;
}

/** Identifies one claim of one execution: writes under it succeed only while it is the current claim. */
export interface ClaimToken {
  executionId: string;
  fence: number;
}

/** A claim a worker holds: everything the run needs. */
export interface ExecutionClaim extends ClaimToken {
  workerId: string;
  leaseExpiresAt: number;
  skillId: string;
  skillName: string;
  skillVersion: string;
  contentHash: string;
  apiKeyId: string;
  sessionId: string | null;
  parentExecutionId: string | null;
  idempotencyKey: string | null;
  rawInputJson: string | null;
  optionsJson: string;
  deadlineAt: number | null;
  /** Attempts already made by earlier claims (0 the first time). */
  attempts: number;
  /** The approval granted, on a run after an approval; else null. */
  approval: ExecutionApproval | null;
  createdAt: number;
  rerunnable: boolean;
}

/** What {@link ExecutionRecordStore.claim} found. */
export type ClaimResult =
  | { kind: "claimed"; claim: ExecutionClaim }
  | { kind: "ended"; execution: SkillExecution }
  | { kind: "unavailable"; status: ExecutionStatus | null };

/** What a heartbeat found. */
export interface RenewResult {
  held: boolean;
  leaseExpiresAt: number | null;
  cancelRequested: boolean;
  cancelReason: string | null;
}

/** The final state a worker commits. */
export interface FinalOutcome {
  status: ExecutionStatus;
  outputJson: string | null;
  error: { code: string; message: string; dataJson: string | null } | null;
  attempts: number;
  durationMs: number | null;
  traceId: string | null;
  spanId: string | null;
}

/** What {@link ExecutionRecordStore.requestCancel} did. */
export type CancelRequestResult =
  | { kind: "ended"; execution: SkillExecution }
  | { kind: "requested"; execution: SkillExecution }
  | { kind: "final"; execution: SkillExecution }
  | { kind: "unknown" };

/** An execution the recovery changed. */
export interface RecoveredExecution {
  id: string;
  /** `timed-out`: a queued execution past its deadline, ended `timeout` (`DEADLINE_EXCEEDED`). */
  action: "requeued" | "interrupted" | "expired" | "timed-out";
  queue: string;
  contentHash: string;
}

/** A worker as it reports itself. */
export interface WorkerHeartbeat {
  workerId: string;
  host: string;
  pid: number;
  queues: readonly string[];
  skills: readonly { name: string; version: string; contentHash: string }[];
  concurrency: number;
  running: number;
  startedAt: number;
}

/** A worker as {@link ExecutionRecordStore.listWorkers} reads it. */
export interface WorkerRecord extends WorkerHeartbeat {
  lastHeartbeatAt: number;
  /** ms since its last heartbeat, by the database clock. */
  heartbeatAgeMs: number;
}

/** A change to an execution, told to every subscriber. */
export type RecordNotice =
  | { type: "status"; executionId: string; apiKeyId: string; status: ExecutionStatus }
  | { type: "progress"; executionId: string; apiKeyId: string }
  | { type: "cancel"; executionId: string };
