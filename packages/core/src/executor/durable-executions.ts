import type { Context } from "@opentelemetry/api";
import type { BackendApprove, BackendSubmit } from "../distributed/execution-backend.js";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { InterceptorChain } from "../interceptors/interceptor-chain.js";
import type { FinishFailureReport } from "../interceptors/interceptor-pass.js";
import type { SkillRegistry } from "../registry/skill-registry.js";
import type { ExecutionTelemetry } from "../telemetry/execution-telemetry.js";
import { contextOfStoredSpan } from "../telemetry/stored-span-context.js";
import {
  type ExecuteOptions,
  type ExecutionApproval,
  type ExecutionProgress,
  isFinalExecutionStatus,
  type Skill,
  type SkillExecution,
  type SkillLogger,
  type SubmitOptions,
} from "../types.js";
import type { ActiveRuns } from "./active-runs.js";
import { createExecutionId } from "./create-execution-id.js";
import {
  checkApprovalTimeout,
  checkedDecider,
  checkedText,
  MAX_REASON_LENGTH,
  notPending,
} from "./decision-checks.js";
import type {
  ApproveOptions,
  CancelOptions,
  EventsOptions,
  ExecutionAccess,
  RejectOptions,
  WaitOptions,
  WatchFilter,
} from "./durable-options.js";
import { ExecutionEventHub, type ExecutionStreamEvent } from "./execution-event-hub.js";
import { ExecutionEventRelay } from "./execution-event-relay.js";
import { serialize } from "./execution-outcome.js";
import type { ExecutionPort } from "./execution-port.js";
import { type ClaimedJob, ExecutionQueue, type ExecutionQueueOptions } from "./execution-queue.js";
import type { DurableSide, ExecutionPause, ExecutionRequest, ExecutionRun } from "./execution-run.js";
import { ExecutionState } from "./execution-state.js";
import type { ExecutionStore } from "./execution-store.js";
import { findOverDeepPath } from "./find-over-deep-path.js";
import { followExecutionEvents } from "./follow-execution-events.js";
import { formatTimestamp } from "./format-timestamp.js";
import { hashInput } from "./hash-input.js";
import { checkSameRequest } from "./idempotency-gate.js";
import { jobOptionsOf, jsonOf, parseJobOptions, parseJson } from "./job-options.js";
import type { SchemaValidator } from "./schema-validator.js";
import { waitUntilSettled } from "./wait-until-settled.js";

/** What {@link DurableExecutions} is built from. */
export interface DurableExecutionsOptions {
  store: ExecutionStore;
  registry: SkillRegistry;
  validator: SchemaValidator;
  interceptors: InterceptorChain;
  port: ExecutionPort;
  reportFinishFailure: FinishFailureReport;
  logger: SkillLogger;
  maxNestingDepth: number;
  /** The background queue's limits; `false`: this host never runs queued work. */
  queue: ExecutionQueueOptions | false | undefined;
  /** How long an approval may wait when neither the call nor the skill says, in ms (default 24 h; null: for ever). */
  approvalTimeoutMs: number | null | undefined;
  /** The runs under way in this process (see `ExecutionServices.running`). */
  running: ActiveRuns<ExecutionRun>;
  /** Where a submit finds the trace it continues. */
  telemetry: ExecutionTelemetry;
  /** Runs an execution the queue claimed (the executor tracks it like any other). */
  runExecution(request: ExecutionRequest): Promise<SkillExecution>;
}

const DEFAULT_APPROVAL_TIMEOUT_MS = 24 * 60 * 60 * 1000;
/** Progress reports of one execution are stored at most this often; every one is published. */
const PROGRESS_WRITE_INTERVAL_MS = 100;
/** Events are kept this long for subscribers in other processes, then pruned. */
const EVENT_RETENTION_MS = 60 * 60 * 1000;
/** Ticks between prunes of old events and stale cancel requests. */
const PRUNE_EVERY_TICKS = 300;

/** Per-run state of the throttled progress store. */
interface ProgressWrites {
  lastWrite: number;
  pending: ExecutionProgress | undefined;
  timer: NodeJS.Timeout | undefined;
}

const NO_PROGRESS = { progress() {} };

/**
 * Executions with a life of their own: `submit()` and the background queue, `wait()`,
 * `cancel()`, approvals, and the events of every execution — in this process at once, from
 * other processes on the same file through the event log and the rows (polled while anyone
 * listens). Also what each `ExecutionRun` tells about progress and pauses (`DurableSide`).
 */
export class DurableExecutions implements DurableSide {
  readonly hub = new ExecutionEventHub();
  private readonly options: DurableExecutionsOptions;
  private readonly queue: ExecutionQueue | undefined;
  private readonly defaultApprovalTimeoutMs: number | null;
  private readonly pollIntervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  /** Hands what other processes did to this process's subscribers. */
  private readonly relay: ExecutionEventRelay;
  private ticks = 0;
  private closed = false;

  constructor(options: DurableExecutionsOptions) {
    this.options = options;
    this.relay = new ExecutionEventRelay(options.store, this.hub, options.running);
    const timeout = options.approvalTimeoutMs;
    if (timeout !== undefined && timeout !== null && !(Number.isInteger(timeout) && timeout > 0)) {
      throw new SkillboxError(
        "CONFIG_INVALID",
        `SkillExecutor: \`approvalTimeoutMs\` must be a positive whole number of milliseconds or null, got ${JSON.stringify(timeout)}`,
      );
    }
    this.defaultApprovalTimeoutMs = timeout === undefined ? DEFAULT_APPROVAL_TIMEOUT_MS : timeout;
    if (options.queue !== false) {
      this.queue = new ExecutionQueue(
        options.store.jobs,
        (claimed) => this.runClaimed(claimed),
        (job) => options.registry.getSkill(job.skill_id),
        options.queue,
      );
      this.pollIntervalMs = this.queue.pollIntervalMs;
    } else {
      this.pollIntervalMs = 200;
    }
  }

  /** Starts the background queue: what is queued (by this host before a restart, or others) runs. */
  start(): void {
    if (this.queue === undefined) return;
    this.ensureTimer();
    // At once, not on the next turn: what recovery re-queued is claimed before any new submit,
    // and a host with an empty queue lets its first submits start at once.
    this.queue.dispatch();
  }

  /** Stops taking queued work and ends every event stream (the executor closes). */
  close(): void {
    this.closed = true;
    this.queue?.stop();
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.hub.closeAll(new SkillboxError("BUSY", "The executor closed"));
  }

  // --- what runs tell (DurableSide) ---

  follows(id: string): boolean {
    return this.hub.follows(id);
  }

  started(execution: SkillExecution): void {
    this.publishStatus(execution);
  }

  progress(run: ExecutionRun, progress: ExecutionProgress): void {
    if (this.hub.follows(run.id)) {
      this.hub.publish(
        { type: "progress", executionId: run.id, progress },
        { owner: run.caller, skillName: run.skill.name },
      );
    }
    run.progressState ??= { lastWrite: 0, pending: undefined, timer: undefined } satisfies ProgressWrites;
    const writes = run.progressState as ProgressWrites;
    const now = Date.now();
    if (writes.timer === undefined && now - writes.lastWrite >= PROGRESS_WRITE_INTERVAL_MS) {
      this.writeProgress(run, progress, writes);
      return;
    }
    writes.pending = progress;
    if (writes.timer === undefined) {
      writes.timer = setTimeout(
        () => {
          writes.timer = undefined;
          const pending = writes.pending;
          if (pending !== undefined) this.writeProgress(run, pending, writes);
        },
        Math.max(1, PROGRESS_WRITE_INTERVAL_MS - (now - writes.lastWrite)),
      );
    }
  }

  settleProgress(run: ExecutionRun): void {
    const writes = run.progressState as ProgressWrites | undefined;
    if (writes?.timer === undefined) return;
    clearTimeout(writes.timer);
    writes.timer = undefined;
    if (writes.pending !== undefined) this.writeProgress(run, writes.pending, writes);
  }

  paused(run: ExecutionRun, pause: ExecutionPause): SkillExecution {
    const { store } = this.options;
    const { skill } = run;
    const written = store.jobs.pause({
      rowid: pause.rowid,
      id: run.id,
      apiKeyId: run.caller,
      skillId: skill.id,
      skillName: skill.name,
      approval: pause.approval,
      expiresAt: pause.approval.expiresAt === null ? null : Date.parse(pause.approval.expiresAt),
      rawInputJson: serialize(pause.input),
      options: jobOptionsOf(run.options, run.parentContext),
      attempts: pause.attempts,
      queuedAt: Date.now(),
      rerunnable: skill.idempotent === true,
    });
    // Not written: another host ended the row meanwhile (this runner's lease had lapsed).
    const execution = written ? run.snapshot() : (store.get(run.id) ?? run.snapshot());
    this.publishStatus(execution);
    return execution;
  }

  finished(execution: SkillExecution): void {
    if (this.hub.follows(execution.id)) this.publishFinished(execution);
  }

  approvalTimeoutMs(skill: Skill, options: ExecuteOptions): number | null {
    return options.approvalTimeoutMs ?? skill.approvalTimeoutMs ?? this.defaultApprovalTimeoutMs;
  }

  // --- the public operations ---

  /** See `SkillExecutor.submit`. */
  submit(skill: Skill, input: unknown, options: SubmitOptions, caller: string): Promise<string> {
    const { store } = this.options;
    checkApprovalTimeout(options.approvalTimeoutMs);
    const rawInputJson = this.keptInput(input, skill);
    const key = options.idempotencyKey;
    // The submitter's trace: the run continues it, now or from the queue.
    const parentContext = this.options.telemetry.parentContext();
    if (key === undefined && this.queue?.reserve(skill, caller) === true) {
      return this.startNow({ skill, input, options, caller, rawInputJson, parentContext });
    }
    const inputHash = key === undefined ? null : hashInput(input, store.inputHashKey);
    if (key !== undefined) {
      const stored = this.storedForKey(caller, key, skill, inputHash);
      if (stored !== undefined) return Promise.resolve(stored);
    }
    const createdAt = Date.now();
    const id = createExecutionId(createdAt);
    const sessionId = options.sessionId ?? null;
    const audited = this.auditedInput({ skill, input, id, caller, sessionId });
    const row = {
      id,
      skillId: skill.id,
      skillName: skill.name,
      skillVersion: skill.version,
      apiKeyId: caller,
      sessionId,
      idempotencyKey: key ?? null,
      auditedInputJson: serialize(audited),
      rawInputJson,
      inputHash,
      options: jobOptionsOf(options, parentContext),
      createdAt,
      rerunnable: skill.idempotent === true,
    };
    this.queue?.noteQueued();
    // Group-committed with the audit rows written in the same turn: many submits, one commit.
    return store
      .write(id, () => store.jobs.submit(row))
      .then(
        () => {
          if (this.hub.active) {
            const execution = store.get(id);
            if (execution !== undefined) this.publishStatus(execution);
          }
          this.queue?.noteSubmitted();
          return id;
        },
        (error: unknown) => {
          this.queue?.noteSubmitted();
          // Another caller (or process) submitted the same key first: its execution is the answer.
          const winner = key === undefined ? undefined : this.storedForKey(caller, key, skill, inputHash);
          if (winner !== undefined) return winner;
          throw error;
        },
      );
  }

  /**
   * A submit the host has room for while nothing waits in the queue: it starts at once, as
   * `execute()` does (its row written `running`, in the same group commit as other executions),
   * and the id is answered once that row is committed. A skill safe to rerun also gets its job,
   * so a crash puts it back in the queue.
   */
  private startNow(submitted: {
    skill: Skill;
    input: unknown;
    options: SubmitOptions;
    caller: string;
    rawInputJson: string | null;
    parentContext: Context | undefined;
  }): Promise<string> {
    const { skill, input, options, caller, rawInputJson, parentContext } = submitted;
    const { store } = this.options;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.queue?.release(skill.name);
    };
    let committed!: (id: string) => void;
    let failed!: (error: unknown) => void;
    const answered = new Promise<string>((resolve, reject) => {
      committed = resolve;
      failed = reject;
    });
    const run = this.options.runExecution({
      skill,
      input,
      options,
      caller,
      depth: 0,
      inputHash: null,
      onCommitted: committed,
      onSettled: release,
      parentContext,
      runningJob:
        skill.idempotent === true
          ? (id, createdAt) =>
              store.jobs.insertRunningJob({
                id,
                apiKeyId: caller,
                skillId: skill.id,
                skillName: skill.name,
                rawInputJson,
                options: jobOptionsOf(options, parentContext),
                createdAt,
              })
          : undefined,
    });
    run.then(undefined, (error: unknown) => {
      release();
      failed(error);
    });
    return answered;
  }

  /** See `SkillExecutor.wait`. */
  async wait(id: string, options: WaitOptions = {}): Promise<SkillExecution> {
    return waitUntilSettled(id, options, {
      hub: this.hub,
      read: () => {
        const local = this.options.running.get(id);
        // Running in this process: not final, and its end reaches the subscription.
        return local !== undefined && (options.apiKeyId === undefined || options.apiKeyId === local.caller)
          ? undefined
          : this.read(id, options);
      },
      // What ends it may come from another process (a decision, a claim), through the poll.
      onPending: () => this.followAcrossProcesses(),
      readAtTimeout: () => this.options.store.get(id),
    });
  }

  /** See `SkillExecutor.cancel`. */
  async cancel(id: string, options: CancelOptions = {}): Promise<SkillExecution> {
    const reason =
      checkedText("cancel", "reason", options.reason, MAX_REASON_LENGTH) ?? "cancel() was called";
    const { store, running } = this.options;
    for (let tries = 0; tries < 3; tries++) {
      const current = this.read(id, options);
      if (isFinalExecutionStatus(current.status)) {
        throw new SkillboxError(
          "EXECUTION_FINISHED",
          `Execution ${id} has ended already (${current.status}); there is nothing to cancel`,
          { data: { status: current.status } },
        );
      }
      const local = running.get(id);
      if (local !== undefined) {
        local.cancel(reason);
        return this.wait(id);
      }
      if (current.status === "queued" || current.status === "awaiting_approval") {
        const ended = store.jobs.end({
          id,
          from: current.status,
          status: "cancelled",
          code: "CANCELLED",
          message: `${current.skillName}@${current.skillVersion} was cancelled before it ran: ${reason}`,
        });
        if (ended) return this.afterEnd(id);
        continue;
      }
      // Running in another process (or just claimed here): its host acts on the request.
      store.jobs.requestCancel(id, reason);
      return store.get(id) ?? current;
    }
    return this.read(id, options);
  }

  /** See `SkillExecutor.approve`. */
  async approve(id: string, options: ApproveOptions): Promise<SkillExecution> {
    const by = checkedDecider("approve", options?.by);
    const comment = checkedText("approve", "comment", options.comment, MAX_REASON_LENGTH) ?? null;
    const { store, registry, validator } = this.options;
    const current = this.awaiting(id, options, "approve");
    const approval = current.approval as ExecutionApproval;
    let rawInputJson: string | null = null;
    let auditedInputJson: string | null = null;
    const edited = options.input !== undefined;
    if (edited) {
      const job = store.jobs.job(id);
      const skill = job === undefined ? undefined : registry.getSkill(job.skill_id);
      if (skill === undefined) {
        throw new SkillboxError(
          "SKILL_NOT_FOUND",
          `${current.skillName}@${current.skillVersion} is no longer registered, so an edited input cannot be checked; approve without \`input\` or reject`,
        );
      }
      // Depth first: the schema check walks the value recursively.
      rawInputJson = this.keptInput(options.input, skill);
      validator.validateInput(skill, options.input);
      auditedInputJson = serialize(
        this.auditedInput({
          skill,
          input: options.input,
          id,
          caller: current.apiKeyId,
          sessionId: current.sessionId,
        }),
      );
    }
    const decided: ExecutionApproval = {
      ...approval,
      decision: "approved",
      decidedBy: by,
      decidedAt: formatTimestamp(Date.now()),
      comment,
      inputEdited: edited,
    };
    if (!store.jobs.approve({ id, approval: decided, rawInputJson, auditedInputJson })) {
      throw notPending(id, this.read(id, options), "approve");
    }
    const execution = this.read(id, options);
    this.publishStatus(execution);
    this.queue?.kick();
    return execution;
  }

  /** See `SkillExecutor.reject`. */
  async reject(id: string, options: RejectOptions): Promise<SkillExecution> {
    const by = checkedDecider("reject", options?.by);
    const reason = checkedText("reject", "reason", options.reason, MAX_REASON_LENGTH);
    const current = this.awaiting(id, options, "reject");
    const decided: ExecutionApproval = {
      ...(current.approval as ExecutionApproval),
      decision: "rejected",
      decidedBy: by,
      decidedAt: formatTimestamp(Date.now()),
      comment: reason ?? null,
    };
    const ended = this.options.store.jobs.end({
      id,
      from: "awaiting_approval",
      status: "rejected",
      code: "APPROVAL_REJECTED",
      message: `${current.skillName}@${current.skillVersion} was rejected by ${by}${reason === undefined ? "" : `: ${reason}`}`,
      approval: decided,
    });
    if (!ended) throw notPending(id, this.read(id, options), "reject");
    return this.afterEnd(id);
  }

  /** See `SkillExecutor.events`. */
  events(id: string, options: EventsOptions = {}): AsyncGenerator<ExecutionStreamEvent, void, undefined> {
    return followExecutionEvents(id, options, {
      hub: this.hub,
      read: () => this.read(id, options),
      // What changes it may come from another process (a decision, a claim), through the poll.
      onPending: () => this.followAcrossProcesses(),
    });
  }

  /** See `SkillExecutor.watchExecutions`. */
  async *watch(filter: WatchFilter = {}): AsyncGenerator<ExecutionStreamEvent, void, undefined> {
    const subscription = this.hub.subscribe(
      {
        ids: filter.ids === undefined ? undefined : new Set(filter.ids),
        owner: filter.apiKeyId,
        skill: filter.skill,
      },
      { signal: filter.signal },
    );
    try {
      this.followAcrossProcesses();
      yield* subscription;
    } finally {
      await subscription.return();
    }
  }

  // --- what a distributed backend is handed ---

  /**
   * A submit prepared for an `ExecutionBackend`: the input checked and kept as JSON, passed
   * through the `audit` hooks under a fresh id, the options that outlive the call with the
   * submitter's trace, and the `totalTimeoutMs` the record's deadline is set from (none without it).
   */
  prepareSubmit(skill: Skill, input: unknown, options: SubmitOptions, caller: string): BackendSubmit {
    checkApprovalTimeout(options.approvalTimeoutMs);
    const rawInputJson = this.keptInput(input, skill);
    const createdAt = Date.now();
    const id = createExecutionId(createdAt);
    const audited = this.auditedInput({ skill, input, id, caller, sessionId: options.sessionId ?? null });
    const { totalTimeoutMs } = options;
    return {
      id,
      skill,
      caller,
      input,
      rawInputJson,
      auditedInputJson: serialize(audited),
      options,
      jobOptions: jobOptionsOf(options, this.options.telemetry.parentContext()),
      // A duration, not a time: the record adds it to the database's now.
      totalTimeoutMs: typeof totalTimeoutMs === "number" && totalTimeoutMs > 0 ? totalTimeoutMs : null,
    };
  }

  /**
   * An approval prepared for an `ExecutionBackend` from the record as it stands (`current`,
   * awaiting approval): the decision, and an edited input checked against the schema of `skill`
   * (this host's copy) and audited.
   */
  prepareApproval(
    current: SkillExecution,
    skill: Skill | undefined,
    options: ApproveOptions,
  ): BackendApprove {
    const by = checkedDecider("approve", options?.by);
    const comment = checkedText("approve", "comment", options.comment, MAX_REASON_LENGTH) ?? null;
    if (current.status !== "awaiting_approval" || current.approval === null)
      throw notPending(current.id, current, "approve");
    const edited = options.input !== undefined;
    const request: BackendApprove = {
      id: current.id,
      approval: {
        ...current.approval,
        decision: "approved",
        decidedBy: by,
        decidedAt: formatTimestamp(Date.now()),
        comment,
        inputEdited: edited,
      },
      ...(options.apiKeyId === undefined ? {} : { apiKeyId: options.apiKeyId }),
    };
    if (!edited) return request;
    if (skill === undefined) {
      throw new SkillboxError(
        "SKILL_NOT_FOUND",
        `${current.skillName}@${current.skillVersion} is not registered on this host, so an edited input cannot be checked; approve without \`input\` or reject`,
      );
    }
    const rawInputJson = this.keptInput(options.input, skill);
    this.options.validator.validateInput(skill, options.input);
    const audited = this.auditedInput({
      skill,
      input: options.input,
      id: current.id,
      caller: current.apiKeyId,
      sessionId: current.sessionId,
    });
    return {
      ...request,
      ...(rawInputJson === null ? {} : { rawInputJson }),
      ...(serialize(audited) === null ? {} : { auditedInputJson: serialize(audited) as string }),
    };
  }

  // --- internals ---

  /**
   * The JSON text a job keeps of `input` (a submit's, an approver's edit): refused with
   * `INPUT_INVALID` when it nests deeper than the executor accepts, or is not JSON.
   */
  private keptInput(input: unknown, skill: Skill): string | null {
    const { maxNestingDepth } = this.options;
    const overDeep = findOverDeepPath(input, maxNestingDepth, "input");
    if (overDeep !== undefined) {
      throw new SkillboxError(
        "INPUT_INVALID",
        `${skill.name}@${skill.version}: \`input\` nests objects and arrays deeper than ${maxNestingDepth} levels (at ${overDeep}); send a flatter value`,
        { data: { path: overDeep, maxDepth: maxNestingDepth } },
      );
    }
    return jsonOf(input, skill);
  }

  /** The record of `id` if the caller may see it, else `EXECUTION_NOT_FOUND`. */
  private read(id: string, access: ExecutionAccess): SkillExecution {
    const execution = typeof id === "string" ? this.options.store.get(id) : undefined;
    if (
      execution === undefined ||
      (access.apiKeyId !== undefined && execution.apiKeyId !== access.apiKeyId)
    ) {
      throw new SkillboxError(
        "EXECUTION_NOT_FOUND",
        `No execution ${JSON.stringify(id)} is visible to this caller`,
        {
          data: { id },
        },
      );
    }
    return execution;
  }

  /** The record of an execution awaiting approval, or why it cannot be decided. */
  private awaiting(id: string, access: ExecutionAccess, action: "approve" | "reject"): SkillExecution {
    const current = this.read(id, access);
    if (current.status !== "awaiting_approval" || current.approval === null)
      throw notPending(id, current, action);
    const { expiresAt } = current.approval;
    if (expiresAt !== null && Date.parse(expiresAt) <= Date.now()) {
      this.expire(id);
      throw new SkillboxError(
        "APPROVAL_EXPIRED",
        `Execution ${id} waited for approval until ${expiresAt}, and that has passed; submit it again`,
        { data: { expiresAt } },
      );
    }
    return current;
  }

  /** Ends an execution whose approval deadline passed. */
  private expire(id: string): void {
    const current = this.options.store.get(id);
    if (current?.status !== "awaiting_approval" || current.approval === null) return;
    const ended = this.options.store.jobs.end({
      id,
      from: "awaiting_approval",
      status: "rejected",
      code: "APPROVAL_EXPIRED",
      message: `${current.skillName}@${current.skillVersion} waited for approval past its deadline (${current.approval.expiresAt})`,
      approval: { ...current.approval, decision: "expired", decidedAt: formatTimestamp(Date.now()) },
    });
    if (ended) this.afterEnd(id);
  }

  /** The record of an execution that just ended without running, published. */
  private afterEnd(id: string): SkillExecution {
    const execution = this.options.store.get(id) as SkillExecution;
    this.publishFinished(execution);
    return execution;
  }

  private storedForKey(
    caller: string,
    key: string,
    skill: Skill,
    inputHash: string | null,
  ): string | undefined {
    const stored = this.options.store.findByIdempotencyKey(caller, key);
    if (stored === undefined) return undefined;
    checkSameRequest(
      {
        executionId: () => stored.execution.id,
        skillName: stored.execution.skillName,
        inputHash: stored.inputHash,
      },
      skill,
      inputHash,
      key,
    );
    return stored.execution.id;
  }

  /** The input as the audit trail stores it: through the `audit` hooks of the interceptors that apply. */
  private auditedInput(subject: {
    skill: Skill;
    input: unknown;
    id: string;
    caller: string;
    sessionId: string | null;
  }): unknown {
    const { interceptors, port, reportFinishFailure } = this.options;
    const state = new ExecutionState({
      port,
      skill: subject.skill,
      input: subject.input,
      executionId: subject.id,
      parentExecutionId: null,
      apiKeyId: subject.caller,
      sessionId: subject.sessionId,
      depth: 0,
      approval: null,
      progressSink: NO_PROGRESS,
    });
    return interceptors.open(subject.skill, state, reportFinishFailure).audit("input", subject.input);
  }

  /** Runs a job the queue claimed; one whose skill is gone or disabled ends with an error. */
  private async runClaimed({ job, claimed, skill }: ClaimedJob): Promise<unknown> {
    const { store } = this.options;
    const refusal =
      skill === undefined
        ? new SkillboxError(
            "SKILL_NOT_FOUND",
            `${job.skill_name} (skill ${job.skill_id}) is no longer registered, so the queued execution cannot run`,
          )
        : skill.enabled
          ? undefined
          : new SkillboxError(
              "SKILL_DISABLED",
              `${skill.name}@${skill.version} was disabled while the execution waited in the queue; enable it and submit again`,
            );
    if (refusal !== undefined || skill === undefined) {
      await store.finish({
        rowid: claimed.rowid,
        id: job.execution_id,
        status: "error",
        outputJson: null,
        error: { code: refusal?.code ?? "SKILL_NOT_FOUND", message: refusal?.message ?? "" },
        attempts: claimed.attempts,
        duration: 0,
        finishedAt: Date.now(),
        job: { apiKeyId: job.api_key_id, skillName: job.skill_name },
      });
      const ended = store.get(job.execution_id);
      if (ended !== undefined) this.finished(ended);
      return;
    }
    const { parentSpan, ...options } = parseJobOptions(claimed.options);
    return this.options
      .runExecution({
        skill,
        input: claimed.input === null ? undefined : parseJson(claimed.input),
        options: { ...options, apiKeyId: job.api_key_id } as ExecuteOptions,
        parentContext: contextOfStoredSpan(parentSpan),
        caller: job.api_key_id,
        depth: 0,
        inputHash: null,
        resume: {
          id: job.execution_id,
          rowid: claimed.rowid,
          createdAt: claimed.created_at,
          attempts: claimed.attempts,
          approval: parseJson(claimed.approval) as ExecutionApproval | null,
          sessionId: claimed.session_id,
          idempotencyKey: claimed.idempotency_key,
          rerunnable: claimed.rerunnable === 1,
        },
      })
      .catch((error: unknown) =>
        this.options.logger.error("A queued execution failed to run", {
          executionId: job.execution_id,
          error: String(error),
        }),
      );
  }

  private writeProgress(run: ExecutionRun, progress: ExecutionProgress, writes: ProgressWrites): void {
    writes.lastWrite = Date.now();
    writes.pending = undefined;
    try {
      this.options.store.jobs.recordProgress({
        id: run.id,
        apiKeyId: run.caller,
        skillName: run.skill.name,
        progressJson: JSON.stringify(progress),
      });
    } catch (error) {
      // A locked database: the report was published; the next one stores the latest.
      this.options.logger.warn("Storing a progress report failed", {
        executionId: run.id,
        error: String(error),
      });
    }
  }

  private publishStatus(execution: SkillExecution): void {
    if (!this.hub.active) return;
    if (isFinalExecutionStatus(execution.status)) {
      this.publishFinished(execution);
      return;
    }
    this.hub.publish(
      {
        type: "status",
        executionId: execution.id,
        status: execution.status,
        at: formatTimestamp(Date.now()),
        execution,
      },
      { owner: execution.apiKeyId, skillName: execution.skillName },
    );
  }

  private publishFinished(execution: SkillExecution): void {
    this.hub.publish(
      { type: "finished", executionId: execution.id, execution },
      { owner: execution.apiKeyId, skillName: execution.skillName },
    );
  }

  /** Subscribers in this process hear of executions in other processes from now on. */
  private followAcrossProcesses(): void {
    if (this.closed) return;
    this.relay.follow();
    this.ensureTimer();
  }

  private ensureTimer(): void {
    if (this.closed) return;
    this.timer ??= setInterval(() => this.tick(), this.pollIntervalMs);
    this.holdProcess();
  }

  /**
   * The queue alone never keeps a process alive that has nothing else to do; a `wait()` or an
   * event stream does, since what it waits for may come from another process through this poll.
   */
  private holdProcess(): void {
    if (this.hub.active) this.timer?.ref();
    else this.timer?.unref();
  }

  /** One poll: queued work, cancel requests, lapsed approvals, events of other processes. */
  private tick(): void {
    try {
      if (this.queue !== undefined) {
        this.queue.dispatch();
        this.actOnCancelRequests();
        for (const id of this.options.store.jobs.expiredApprovals(Date.now(), 100)) this.expire(id);
        if (++this.ticks % PRUNE_EVERY_TICKS === 0) this.prune();
      }
      this.holdProcess();
      if (this.hub.active) this.relay.relay();
      else {
        this.relay.unfollow();
        if (this.queue === undefined && this.timer !== undefined) {
          clearInterval(this.timer);
          this.timer = undefined;
        }
      }
    } catch (error) {
      // A locked or closing database: the next tick tries again.
      this.options.logger.debug("The durable-execution poll failed", { error: String(error) });
    }
  }

  private actOnCancelRequests(): void {
    const { store, running } = this.options;
    for (const request of store.jobs.cancelRequests()) {
      const run = running.get(request.execution_id);
      if (run === undefined) continue;
      run.cancel(request.reason ?? "cancel() was called");
      store.jobs.dropCancelRequest(request.execution_id);
    }
  }

  private prune(): void {
    const before = Date.now() - EVENT_RETENTION_MS;
    this.options.store.jobs.pruneEvents(before);
    this.options.store.jobs.dropStaleCancelRequests(before);
  }
}
