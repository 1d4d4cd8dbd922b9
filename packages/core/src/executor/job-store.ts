import type Database from "better-sqlite3";
import type { StoredSpanContext } from "../telemetry/stored-span-context.js";
import type { ExecutionApproval, ExecutionStatus } from "../types.js";

/** What a job runs with besides its input: the call's options that outlive the call. */
export interface JobOptions {
  timeoutMs?: number;
  totalTimeoutMs?: number;
  maxRetries?: number;
  retry?: Record<string, unknown>;
  approvalTimeoutMs?: number;
  toolCallId?: string;
  /** The span the submitting call ran under: the queued run continues its trace. */
  parentSpan?: StoredSpanContext;
}

/** State of a job: where the execution it belongs to stands in the queue. */
export type JobState = "queued" | "awaiting_approval" | "running";

/** A queued job as the dispatcher picks it (without its input, which only a claim reads). */
export interface QueuedJob {
  execution_id: string;
  api_key_id: string;
  skill_id: string;
  skill_name: string;
  queued_at: number;
}

/** What a claim reads of the job and its row: all a run needs. */
export interface ClaimedRow {
  rowid: number;
  attempts: number;
  created_at: number;
  session_id: string | null;
  idempotency_key: string | null;
  approval: string | null;
  input: string | null;
  options: string;
  rerunnable: number;
}

/** A job as recovery and approvals read it. */
export interface JobRow {
  execution_id: string;
  api_key_id: string;
  skill_id: string;
  skill_name: string;
  input: string | null;
  options: string;
  state: JobState;
  queued_at: number;
  claimed_by: number | null;
  approval_expires_at: number | null;
  approved: number;
  rerunnable: number;
}

/** One stored event of an execution (see `skill_execution_events`). */
export interface StoredEventRow {
  seq: number;
  execution_id: string;
  api_key_id: string;
  skill_name: string;
  type: "status" | "progress";
  data: string;
  runner: number | null;
  created_at: number;
}

/** The new row of a submitted execution. */
export interface SubmittedRow {
  id: string;
  skillId: string;
  skillName: string;
  skillVersion: string;
  apiKeyId: string;
  sessionId: string | null;
  idempotencyKey: string | null;
  /** The input as the audit trail stores it (redacted by `audit` hooks). */
  auditedInputJson: string | null;
  /** The caller's input as it will run: kept in the job until the execution ends. */
  rawInputJson: string | null;
  inputHash: string | null;
  options: JobOptions;
  createdAt: number;
  rerunnable: boolean;
}

/** An execution stopping to wait for a person. */
export interface PausedRow {
  rowid: number;
  id: string;
  apiKeyId: string;
  skillId: string;
  skillName: string;
  approval: ExecutionApproval;
  expiresAt: number | null;
  rawInputJson: string | null;
  options: JobOptions;
  attempts: number;
  queuedAt: number;
  rerunnable: boolean;
}

const STATUS_EVENT = "status";

/**
 * The SQL of durable executions: jobs (the queue, approvals), cancellation requests across
 * processes, and the event log — all in the same file as the audit trail, so a submit, a pause
 * or a decision commits with the row it changes.
 */
export class JobStore {
  private readonly statements;

  constructor(
    private readonly database: Database.Database,
    private readonly runnerKey: number,
  ) {
    this.statements = {
      insertExecution: database.prepare(
        `INSERT INTO skill_executions (id, skill_id, skill_name, skill_version, api_key_id, session_id,
           idempotency_key, input, input_hash, status, attempts, created_at, runner)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?)`,
      ),
      insertJob: database.prepare(
        `INSERT INTO skill_execution_jobs (execution_id, api_key_id, skill_id, skill_name, input, options, state,
           queued_at, approval_expires_at, approved, rerunnable)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)
         ON CONFLICT (execution_id) DO UPDATE SET input = excluded.input, options = excluded.options,
           state = excluded.state, claimed_by = NULL, approval_expires_at = excluded.approval_expires_at,
           approved = 0`,
      ),
      insertEvent: database.prepare(
        `INSERT INTO skill_execution_events (execution_id, api_key_id, skill_name, type, data, runner, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      job: database.prepare<[string], JobRow>("SELECT * FROM skill_execution_jobs WHERE execution_id = ?"),
      // The owners with queued jobs, one index seek each (a skip scan): a backlog of thousands of
      // one owner's jobs costs one seek, not a scan. Jobs of the shared record (queue NOT NULL)
      // are its workers', never this dispatcher's: `queue IS NULL` keeps them out (and matches
      // the partial index).
      queuedOwners: database
        .prepare<[number], string>(
          `WITH RECURSIVE owners(owner) AS (
             SELECT MIN(api_key_id) FROM skill_execution_jobs WHERE state = 'queued' AND queue IS NULL
             UNION ALL
             SELECT (SELECT MIN(api_key_id) FROM skill_execution_jobs
               WHERE state = 'queued' AND queue IS NULL AND api_key_id > owner)
             FROM owners WHERE owner IS NOT NULL)
           SELECT owner FROM owners WHERE owner IS NOT NULL LIMIT ?`,
        )
        .pluck(),
      queuedOf: database.prepare<[string, number], QueuedJob>(
        `SELECT execution_id, api_key_id, skill_id, skill_name, queued_at FROM skill_execution_jobs
         WHERE state = 'queued' AND queue IS NULL AND api_key_id = ? ORDER BY queued_at, rowid LIMIT ?`,
      ),
      claimJob: database.prepare<
        [number, string],
        { input: string | null; options: string; rerunnable: number }
      >(
        `UPDATE skill_execution_jobs SET state = 'running', claimed_by = ?
         WHERE execution_id = ? AND state = 'queued' AND queue IS NULL
         RETURNING input, options, rerunnable`,
      ),
      claimExecution: database.prepare<
        [number, string],
        Pick<ClaimedRow, "rowid" | "attempts" | "created_at" | "session_id" | "idempotency_key" | "approval">
      >(
        `UPDATE skill_executions SET status = 'running', runner = ? WHERE id = ? AND status = 'queued'
         RETURNING rowid, attempts, created_at, session_id, idempotency_key, approval`,
      ),
      insertRunningJob: database.prepare(
        `INSERT INTO skill_execution_jobs (execution_id, api_key_id, skill_id, skill_name, input, options, state,
           queued_at, claimed_by, approved, rerunnable)
         VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, 0, 1)`,
      ),
      deleteJob: database.prepare<[string]>("DELETE FROM skill_execution_jobs WHERE execution_id = ?"),
      pauseExecution: database.prepare<[string, number, number]>(
        `UPDATE skill_executions SET status = 'awaiting_approval', approval = ?, attempts = ?
         WHERE rowid = ? AND status IN ('running', 'pending')`,
      ),
      approveExecution: database.prepare<[string, string | null, string]>(
        `UPDATE skill_executions SET status = 'queued', approval = ?, input = COALESCE(?, input)
         WHERE id = ? AND status = 'awaiting_approval'`,
      ),
      approveJob: database.prepare<[string | null, string]>(
        `UPDATE skill_execution_jobs SET state = 'queued', input = COALESCE(?, input), approved = 1,
           approval_expires_at = NULL, claimed_by = NULL
         WHERE execution_id = ? AND state = 'awaiting_approval'`,
      ),
      endExecution: database.prepare<[string, string, string, string | null, number, string, string]>(
        `UPDATE skill_executions SET status = ?, error_code = ?, error_message = ?, approval = COALESCE(?, approval),
           finished_at = ?, duration_ms = COALESCE(duration_ms, 0)
         WHERE id = ? AND status = ?`,
      ),
      expired: database.prepare<[number, number], { execution_id: string }>(
        `SELECT execution_id FROM skill_execution_jobs
         WHERE state = 'awaiting_approval' AND approval_expires_at IS NOT NULL AND approval_expires_at <= ? LIMIT ?`,
      ),
      requestCancel: database.prepare<[string, string | null, number]>(
        `INSERT INTO skill_execution_cancels (execution_id, reason, requested_at) VALUES (?, ?, ?)
         ON CONFLICT (execution_id) DO NOTHING`,
      ),
      cancels: database.prepare<[], { execution_id: string; reason: string | null }>(
        "SELECT execution_id, reason FROM skill_execution_cancels LIMIT 1000",
      ),
      deleteCancel: database.prepare<[string]>("DELETE FROM skill_execution_cancels WHERE execution_id = ?"),
      staleCancels: database.prepare<[number]>(
        `DELETE FROM skill_execution_cancels WHERE requested_at < ? OR execution_id IN (
           SELECT c.execution_id FROM skill_execution_cancels c JOIN skill_executions e ON e.id = c.execution_id
           WHERE e.finished_at IS NOT NULL)`,
      ),
      eventsAfter: database.prepare<[number, number], StoredEventRow>(
        "SELECT * FROM skill_execution_events WHERE seq > ? ORDER BY seq LIMIT ?",
      ),
      lastSeq: database
        .prepare<[], number>("SELECT COALESCE(MAX(seq), 0) FROM skill_execution_events")
        .pluck(),
      pruneEvents: database.prepare<[number]>("DELETE FROM skill_execution_events WHERE created_at < ?"),
      runnerJobs: database.prepare<[number], JobRow>(
        "SELECT * FROM skill_execution_jobs WHERE claimed_by = ? AND state = 'running'",
      ),
      requeueExecution: database.prepare<[string]>(
        "UPDATE skill_executions SET status = 'queued' WHERE id = ? AND status IN ('running', 'pending')",
      ),
      requeueJob: database.prepare<[string]>(
        "UPDATE skill_execution_jobs SET state = 'queued', claimed_by = NULL WHERE execution_id = ?",
      ),
      interruptExecution: database.prepare<[number, string]>(
        `UPDATE skill_executions SET status = 'interrupted', error_code = 'INTERRUPTED',
           error_message = 'The process running this execution stopped before it finished', finished_at = ?
         WHERE id = ? AND status IN ('running', 'pending')`,
      ),
      setProgress: database.prepare<[string, string]>(
        "UPDATE skill_executions SET progress = ? WHERE id = ?",
      ),
      owner: database.prepare<[string], { api_key_id: string; skill_name: string; status: ExecutionStatus }>(
        "SELECT api_key_id, skill_name, status FROM skill_executions WHERE id = ?",
      ),
    };
  }

  /**
   * Writes a submitted execution (`queued`), its job and its first event. Runs inside the audit
   * batcher's transaction (see `ExecutionStore.write`), so submits arriving together commit together.
   */
  submit(row: SubmittedRow): void {
    const { statements } = this;
    statements.insertExecution.run(
      row.id,
      row.skillId,
      row.skillName,
      row.skillVersion,
      row.apiKeyId,
      row.sessionId,
      row.idempotencyKey,
      row.auditedInputJson,
      row.inputHash,
      row.createdAt,
      this.runnerKey,
    );
    this.writeJob({ ...row, state: "queued", queuedAt: row.createdAt, expiresAt: null });
    this.appendStatus({ id: row.id, owner: row.apiKeyId, skillName: row.skillName }, "queued", row.createdAt);
  }

  /**
   * The job of an execution that starts at once on this runner without queueing (its row is
   * inserted `running` in the same transaction): kept only for a skill safe to rerun, so a crash
   * puts it back in the queue with its input.
   */
  insertRunningJob(row: {
    id: string;
    apiKeyId: string;
    skillId: string;
    skillName: string;
    rawInputJson: string | null;
    options: JobOptions;
    createdAt: number;
  }): void {
    this.statements.insertRunningJob.run(
      row.id,
      row.apiKeyId,
      row.skillId,
      row.skillName,
      row.rawInputJson,
      JSON.stringify(row.options),
      row.createdAt,
      this.runnerKey,
    );
  }

  /** The job of execution `id`, if it has one. */
  job(id: string): JobRow | undefined {
    return this.statements.job.get(id);
  }

  /** Owners with queued jobs, in id order (at most `limit`). */
  queuedOwners(limit: number): string[] {
    return this.statements.queuedOwners.all(limit) as string[];
  }

  /** The oldest queued jobs of `owner` (at most `limit`). */
  queuedOf(owner: string, limit: number): QueuedJob[] {
    return this.statements.queuedOf.all(owner, limit);
  }

  /**
   * Takes queued jobs for this runner in one transaction: their rows become `running`. Returns
   * what each run needs, or undefined for a job another host (or a cancel) took first.
   */
  claim(jobs: readonly QueuedJob[]): (ClaimedRow | undefined)[] {
    const { statements } = this;
    const now = Date.now();
    return this.database
      .transaction(() =>
        jobs.map((job) => {
          const taken = statements.claimJob.get(this.runnerKey, job.execution_id);
          if (taken === undefined) return undefined;
          const claimed = statements.claimExecution.get(this.runnerKey, job.execution_id);
          if (claimed === undefined) {
            // The row ended meanwhile (say, a cancel between the reads): the job has no use.
            statements.deleteJob.run(job.execution_id);
            return undefined;
          }
          this.appendStatus(
            { id: job.execution_id, owner: job.api_key_id, skillName: job.skill_name },
            "running",
            now,
          );
          return { ...claimed, ...taken };
        }),
      )
      .immediate();
  }

  /**
   * Stops an execution at `awaiting_approval`: the row says why, the job keeps what it will run
   * with. Returns false when the row was no longer under way (another host ended it).
   */
  pause(row: PausedRow): boolean {
    const { statements } = this;
    return this.database
      .transaction(() => {
        const approvalJson = JSON.stringify(row.approval);
        if (statements.pauseExecution.run(approvalJson, row.attempts, row.rowid).changes === 0) return false;
        this.writeJob({
          ...row,
          state: "awaiting_approval",
          queuedAt: row.queuedAt,
          expiresAt: row.expiresAt,
        });
        this.appendStatus(
          { id: row.id, owner: row.apiKeyId, skillName: row.skillName },
          "awaiting_approval",
          Date.now(),
        );
        return true;
      })
      .immediate();
  }

  /**
   * Records an approval and puts the execution back in the queue, with the edited input when
   * given. Returns false when it no longer awaits approval (decided or ended meanwhile).
   */
  approve(options: {
    id: string;
    approval: ExecutionApproval;
    rawInputJson: string | null;
    auditedInputJson: string | null;
  }): boolean {
    const { statements } = this;
    const job = statements.job.get(options.id);
    if (job === undefined) return false;
    return this.database
      .transaction(() => {
        const now = Date.now();
        const approved = statements.approveExecution.run(
          JSON.stringify(options.approval),
          options.auditedInputJson,
          options.id,
        );
        if (approved.changes === 0) return false;
        statements.approveJob.run(options.rawInputJson, options.id);
        this.appendStatus(
          { id: options.id, owner: job.api_key_id, skillName: job.skill_name },
          "queued",
          now,
        );
        return true;
      })
      .immediate();
  }

  /**
   * Ends an execution that is not running — `queued` or `awaiting_approval` — with a final
   * status and error, and drops its job. Returns false when it was not in `from` any more.
   */
  end(options: {
    id: string;
    from: "queued" | "awaiting_approval";
    status: ExecutionStatus;
    code: string;
    message: string;
    approval?: ExecutionApproval;
  }): boolean {
    const { statements } = this;
    return this.database
      .transaction(() => {
        const owner = statements.owner.get(options.id);
        if (owner === undefined) return false;
        const now = Date.now();
        const ended = statements.endExecution.run(
          options.status,
          options.code,
          options.message,
          options.approval === undefined ? null : JSON.stringify(options.approval),
          now,
          options.id,
          options.from,
        );
        if (ended.changes === 0) return false;
        statements.deleteJob.run(options.id);
        this.appendStatus(
          { id: options.id, owner: owner.api_key_id, skillName: owner.skill_name },
          options.status,
          now,
        );
        return true;
      })
      .immediate();
  }

  /** Awaiting executions whose approval deadline passed (at most `limit`). */
  expiredApprovals(now: number, limit: number): string[] {
    return this.statements.expired.all(now, limit).map((row) => row.execution_id);
  }

  /** Drops the job of an execution that ended, with its final event (inside the finishing transaction). */
  finishJob(options: { id: string; apiKeyId: string; skillName: string; status: ExecutionStatus }): void {
    this.statements.deleteJob.run(options.id);
    this.statements.deleteCancel.run(options.id);
    this.appendStatus(
      { id: options.id, owner: options.apiKeyId, skillName: options.skillName },
      options.status,
      Date.now(),
    );
  }

  /** Asks whichever process runs execution `id` to cancel it. */
  requestCancel(id: string, reason: string | null): void {
    this.statements.requestCancel.run(id, reason, Date.now());
  }

  /** Cancellation requests waiting (for any process). */
  cancelRequests(): { execution_id: string; reason: string | null }[] {
    return this.statements.cancels.all();
  }

  /** Forgets a cancellation request once it was acted on. */
  dropCancelRequest(id: string): void {
    this.statements.deleteCancel.run(id);
  }

  /** Drops requests for executions that ended, and any older than `before`. */
  dropStaleCancelRequests(before: number): void {
    this.statements.staleCancels.run(before);
  }

  /** The newest event's sequence number (0 when there is none). */
  lastEventSeq(): number {
    return this.statements.lastSeq.get() as number;
  }

  /** Events after `seq`, oldest first (at most `limit`). */
  eventsAfter(seq: number, limit: number): StoredEventRow[] {
    return this.statements.eventsAfter.all(seq, limit);
  }

  /** Deletes events written before `before`. */
  pruneEvents(before: number): void {
    this.statements.pruneEvents.run(before);
  }

  /** Stores the latest progress on the row and appends the progress event. */
  recordProgress(options: { id: string; apiKeyId: string; skillName: string; progressJson: string }): void {
    const { statements } = this;
    statements.setProgress.run(options.progressJson, options.id);
    statements.insertEvent.run(
      options.id,
      options.apiKeyId,
      options.skillName,
      "progress",
      options.progressJson,
      this.runnerKey,
      Date.now(),
    );
  }

  /**
   * Recovers the jobs a dead runner had claimed (inside the recovering transaction): a job of a
   * skill safe to rerun goes back to `queued`; any other one's row ends `interrupted`.
   */
  recoverRunner(runner: number, now: number): number {
    const { statements } = this;
    let changed = 0;
    for (const job of statements.runnerJobs.all(runner)) {
      if (job.rerunnable === 1) {
        if (statements.requeueExecution.run(job.execution_id).changes > 0) {
          statements.requeueJob.run(job.execution_id);
          this.appendStatus(
            { id: job.execution_id, owner: job.api_key_id, skillName: job.skill_name },
            "queued",
            now,
          );
          changed++;
          continue;
        }
      } else if (statements.interruptExecution.run(now, job.execution_id).changes > 0) {
        this.appendStatus(
          { id: job.execution_id, owner: job.api_key_id, skillName: job.skill_name },
          "interrupted",
          now,
        );
        changed++;
      }
      statements.deleteJob.run(job.execution_id);
    }
    return changed;
  }

  /** Inserts (or, for an execution that has one, replaces) the job of an execution. */
  private writeJob(job: {
    id: string;
    apiKeyId: string;
    skillId: string;
    skillName: string;
    rawInputJson: string | null;
    options: JobOptions;
    state: JobState;
    queuedAt: number;
    expiresAt: number | null;
    rerunnable: boolean;
  }): void {
    this.statements.insertJob.run(
      job.id,
      job.apiKeyId,
      job.skillId,
      job.skillName,
      job.rawInputJson,
      JSON.stringify(job.options),
      job.state,
      job.queuedAt,
      job.expiresAt,
      job.rerunnable ? 1 : 0,
    );
  }

  private appendStatus(
    subject: { id: string; owner: string; skillName: string },
    status: ExecutionStatus,
    at: number,
  ): void {
    this.statements.insertEvent.run(
      subject.id,
      subject.owner,
      subject.skillName,
      STATUS_EVENT,
      JSON.stringify({ status }),
      this.runnerKey,
      at,
    );
  }
}
