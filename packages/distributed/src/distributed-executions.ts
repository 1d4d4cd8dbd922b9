import type { ExecutionRecordStore } from "@skillbox/core";
import {
  type BackendApprove,
  type BackendSubmit,
  type CancelOptions,
  type DurationHistogram,
  type DurationHistogramOptions,
  type EventsOptions,
  type ExecutionAccess,
  type ExecutionBackend,
  type ExecutionFilters,
  type ExecutionStreamEvent,
  type ExecutionSummary,
  type ExecutionSummaryOptions,
  type ExecutionTimeline,
  type ExecutionTimelineOptions,
  type RejectOptions,
  type Skill,
  SkillboxError,
  type SkillExecution,
  type SkillLogger,
  type SkillStatsOptions,
  type SkillStatsResult,
  type WaitOptions,
  type WatchFilter,
} from "@skillbox/core";
import {
  checkedDecider,
  checkedText,
  checkSameRequest,
  followExecutionEvents,
  hashInput,
  MAX_REASON_LENGTH,
  notPending,
  waitUntilSettled,
} from "@skillbox/core/internal";
import { RecordFollower } from "./record-follower.js";
import { skillContentHash } from "./skill-content-hash.js";
import { skillQueueName } from "./skill-queue-name.js";

/** Where executions are dispatched: adds their jobs (by execution id) to the queue workers take from. */
export interface JobDispatcher {
  add(jobs: readonly { executionId: string; queue: string; contentHash: string }[]): Promise<void>;
}

/** Options of {@link DistributedExecutions}. */
export interface DistributedExecutionsOptions {
  store: ExecutionRecordStore;
  dispatcher: JobDispatcher;
  logger: SkillLogger;
  /** The key idempotent repeats are compared under (shared by every host: the store's). */
  inputHashKey: Buffer;
  /** How often followed executions are read again besides their notices, in ms (default 1000). */
  pollIntervalMs?: number;
}

/**
 * The executor's side of a distributed deployment (`ExecutionBackend`): a submit is recorded
 * `queued` in the shared store (raw input in the side table) and its job added to the queue;
 * `wait()`, `events()` and `watch()` follow the record through the store's notices with a
 * polling fallback; cancels and decisions are compare-and-set writes on the record, so two hosts
 * deciding at once cannot both win. A job lost between the commit and the add is added again by
 * the sweeper (`RecordSweeper`), so the add failing after the commit loses nothing.
 */
export class DistributedExecutions implements ExecutionBackend {
  private readonly store: ExecutionRecordStore;
  private readonly dispatcher: JobDispatcher;
  private readonly logger: SkillLogger;
  private readonly inputHashKey: Buffer;
  private readonly follower: RecordFollower;
  private closed = false;

  constructor(options: DistributedExecutionsOptions) {
    this.store = options.store;
    this.dispatcher = options.dispatcher;
    this.logger = options.logger;
    this.inputHashKey = options.inputHashKey;
    this.follower = new RecordFollower({
      store: options.store,
      logger: options.logger,
      ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
    });
  }

  /** Starts following the shared record (its notices); call once before use. */
  start(): Promise<void> {
    return this.follower.start();
  }

  async submit(request: BackendSubmit): Promise<string> {
    this.checkOpen();
    const { skill, caller, options } = request;
    const key = options.idempotencyKey;
    const inputHash = key === undefined ? null : hashInput(request.input, this.inputHashKey);
    const queue = skillQueueName(skill);
    const contentHash = skillContentHash(skill);
    const inserted = await this.store.insertQueued({
      id: request.id,
      skillId: skill.id,
      skillName: skill.name,
      skillVersion: skill.version,
      contentHash,
      queue,
      apiKeyId: caller,
      sessionId: options.sessionId ?? null,
      parentExecutionId: null,
      idempotencyKey: key ?? null,
      auditedInputJson: request.auditedInputJson,
      rawInputJson: request.rawInputJson,
      inputHash,
      optionsJson: JSON.stringify(request.jobOptions),
      totalTimeoutMs: request.totalTimeoutMs,
      rerunnable: skill.idempotent === true,
    });
    if (!inserted.inserted) {
      checkSameRequest(
        {
          executionId: () => inserted.existing.id,
          skillName: inserted.existing.skillName,
          inputHash: inserted.inputHash,
        },
        skill,
        inputHash,
        key as string,
      );
      return inserted.existing.id;
    }
    this.follower.publish(inserted.execution);
    await this.dispatch([{ executionId: request.id, queue, contentHash }]);
    return request.id;
  }

  wait(id: string, options: WaitOptions = {}): Promise<SkillExecution> {
    return waitUntilSettled(id, options, {
      hub: this.follower.hub,
      read: () => {
        this.checkOpen();
        return this.read(id, options);
      },
      readAtTimeout: () => this.store.get(id),
    });
  }

  async cancel(id: string, options: CancelOptions = {}): Promise<SkillExecution> {
    const reason =
      checkedText("cancel", "reason", options.reason, MAX_REASON_LENGTH) ?? "cancel() was called";
    this.checkOpen();
    const answer = await this.store.requestCancel({ id, reason, ...owner(options) });
    switch (answer.kind) {
      case "unknown":
        throw notFound(id);
      case "final":
        throw new SkillboxError(
          "EXECUTION_FINISHED",
          `Execution ${id} has ended already (${answer.execution.status}); there is nothing to cancel`,
          { data: { status: answer.execution.status } },
        );
      case "ended":
        this.follower.publish(answer.execution);
        return answer.execution;
      case "requested":
        // Its worker was told (a notice, and its next heartbeat): the cancelled record follows.
        return this.wait(id, { ...owner(options), timeoutMs: CANCEL_WAIT_MS }).catch((error: unknown) => {
          if (error instanceof SkillboxError && error.code === "WAIT_TIMEOUT") return answer.execution;
          throw error;
        });
    }
  }

  async approve(request: BackendApprove): Promise<SkillExecution> {
    this.checkOpen();
    const approved = await this.store.approve({
      id: request.id,
      approval: request.approval,
      ...(request.apiKeyId === undefined ? {} : { owner: request.apiKeyId }),
      ...(request.rawInputJson === undefined ? {} : { rawInputJson: request.rawInputJson }),
      ...(request.auditedInputJson === undefined ? {} : { auditedInputJson: request.auditedInputJson }),
    });
    if (approved === undefined) {
      const current = await this.read(request.id, request);
      // The store expires an approval past its deadline (database clock) instead of granting it.
      if (current.status === "rejected" && current.approval?.decision === "expired") {
        this.follower.publish(current);
        throw approvalExpired(current);
      }
      throw notPending(request.id, current, "approve");
    }
    this.follower.publish(approved);
    const target = await this.store.dispatchTarget(approved.id);
    if (target !== undefined) await this.dispatch([{ executionId: approved.id, ...target }]);
    return approved;
  }

  async reject(id: string, options: RejectOptions): Promise<SkillExecution> {
    const by = checkedDecider("reject", options?.by);
    const reason = checkedText("reject", "reason", options.reason, MAX_REASON_LENGTH);
    this.checkOpen();
    const current = await this.read(id, options);
    if (current.status !== "awaiting_approval" || current.approval === null)
      throw notPending(id, current, "reject");
    const ended = await this.store.endUnclaimed({
      id,
      ...owner(options),
      from: ["awaiting_approval"],
      status: "rejected",
      code: "APPROVAL_REJECTED",
      message: `${current.skillName}@${current.skillVersion} was rejected by ${by}${reason === undefined ? "" : `: ${reason}`}`,
      approval: {
        ...current.approval,
        decision: "rejected",
        decidedBy: by,
        decidedAt: new Date().toISOString(),
        comment: reason ?? null,
      },
    });
    if (ended === undefined) throw notPending(id, await this.read(id, options), "reject");
    this.follower.publish(ended);
    return ended;
  }

  async *events(
    id: string,
    options: EventsOptions = {},
  ): AsyncGenerator<ExecutionStreamEvent, void, undefined> {
    this.checkOpen();
    yield* followExecutionEvents(id, options, { hub: this.follower.hub, read: () => this.read(id, options) });
  }

  async *watch(filter: WatchFilter = {}): AsyncGenerator<ExecutionStreamEvent, void, undefined> {
    this.checkOpen();
    const subscription = this.follower.hub.subscribe(
      {
        ...(filter.ids === undefined ? {} : { ids: new Set(filter.ids) }),
        ...(filter.apiKeyId === undefined ? {} : { owner: filter.apiKeyId }),
        ...(filter.skill === undefined ? {} : { skill: filter.skill }),
      },
      { ...(filter.signal === undefined ? {} : { signal: filter.signal }) },
    );
    try {
      yield* subscription;
    } finally {
      await subscription.return();
    }
  }

  get(id: string): Promise<SkillExecution | undefined> {
    return this.store.get(id);
  }

  async recordNested(execution: SkillExecution, skill: Skill): Promise<void> {
    this.checkOpen();
    await this.store.recordNested(execution, { contentHash: skillContentHash(skill) });
  }

  list(filters: ExecutionFilters = {}): Promise<SkillExecution[]> {
    return this.store.list(filters);
  }

  count(filters: ExecutionFilters = {}): Promise<number> {
    return this.store.count(filters);
  }

  listSummaries(options: ExecutionFilters & ExecutionSummaryOptions = {}): Promise<ExecutionSummary[]> {
    return this.store.listSummaries(options);
  }

  skillStats(
    owner: string,
    names: readonly string[],
    options: SkillStatsOptions = {},
  ): Promise<SkillStatsResult> {
    return this.store.skillStats(owner, names, options);
  }

  executionTimeline(owner: string, options: ExecutionTimelineOptions = {}): Promise<ExecutionTimeline> {
    return this.store.executionTimeline(owner, options);
  }

  durationHistogram(
    owner: string,
    names: readonly string[],
    options: DurationHistogramOptions = {},
  ): Promise<DurationHistogram> {
    return this.store.durationHistogram(owner, names, options);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.follower.close(new SkillboxError("BUSY", "The executor closed"));
  }

  /** Adds jobs; a failure is logged, not thrown: the row is durable and the sweeper adds it again. */
  private async dispatch(jobs: { executionId: string; queue: string; contentHash: string }[]): Promise<void> {
    try {
      await this.dispatcher.add(jobs);
      await this.store.markEnqueued(jobs.map((job) => job.executionId));
    } catch (error) {
      this.logger.warn("could not add jobs to the queue; the sweeper adds them again", {
        executionIds: jobs.map((job) => job.executionId),
        error: String(error),
      });
    }
  }

  private async read(id: string, access: ExecutionAccess): Promise<SkillExecution> {
    const execution = typeof id === "string" ? await this.store.get(id, access.apiKeyId) : undefined;
    if (execution === undefined) throw notFound(id);
    return execution;
  }

  private checkOpen(): void {
    if (this.closed) throw new SkillboxError("BUSY", "The executor is closed");
  }
}

/** How long `cancel()` of a running execution waits for its worker to record the end. */
const CANCEL_WAIT_MS = 5000;

function owner(access: ExecutionAccess): { owner?: string } {
  return access.apiKeyId === undefined ? {} : { owner: access.apiKeyId };
}

/** As the one-host executor answers an approval that came too late. */
function approvalExpired(execution: SkillExecution): SkillboxError {
  const expiresAt = execution.approval?.expiresAt ?? null;
  return new SkillboxError(
    "APPROVAL_EXPIRED",
    `Execution ${execution.id} waited for approval until ${expiresAt}, and that has passed; submit it again`,
    { data: { expiresAt } },
  );
}

function notFound(id: string): SkillboxError {
  return new SkillboxError(
    "EXECUTION_NOT_FOUND",
    `No execution ${JSON.stringify(id)} is visible to this caller`,
    {
      data: { id },
    },
  );
}
