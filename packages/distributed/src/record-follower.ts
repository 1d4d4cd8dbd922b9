import type { ExecutionRecordStore, RecordNotice } from "@skillbox/core";
import {
  type ExecutionStreamEvent,
  isFinalExecutionStatus,
  type SkillExecution,
  type SkillLogger,
} from "@skillbox/core";
import { ExecutionEventHub } from "@skillbox/core/internal";

/** Options of {@link RecordFollower}. */
export interface RecordFollowerOptions {
  store: ExecutionRecordStore;
  logger: SkillLogger;
  /**
   * How often the records of followed executions are read again while anyone follows them, in
   * ms (default 1000): the fallback for a notice lost while the listening connection was down.
   */
  pollIntervalMs?: number;
}

/** Most followed executions read again per poll: the rest wait for their notice or the next poll. */
const MAX_POLLED_PER_TICK = 500;

/**
 * Turns the shared record's notices (PostgreSQL `LISTEN/NOTIFY`, SQLite polling) into this
 * process's execution events: a notice is only a hint, so the record is read and its state
 * published. Executions followed by id are also read again on an interval, so a notice lost
 * while the listener reconnected delays an event by one poll at most, never loses it. Nothing is
 * read while nobody listens.
 */
export class RecordFollower {
  readonly hub = new ExecutionEventHub();
  private readonly store: ExecutionRecordStore;
  private readonly logger: SkillLogger;
  private readonly pollIntervalMs: number;
  /** The last status published per followed execution: a repeat of it is not published again. */
  private readonly lastStatus = new Map<string, string>();
  private unsubscribe: (() => Promise<void>) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(options: RecordFollowerOptions) {
    this.store = options.store;
    this.logger = options.logger;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
  }

  /** Starts listening for notices; resolves once the listener is in place. */
  async start(): Promise<void> {
    this.unsubscribe = await this.store.subscribe((notice) => this.onNotice(notice));
    this.timer = setInterval(() => void this.poll(), this.pollIntervalMs);
    this.timer.unref();
  }

  /** Publishes the record's state to this process's subscribers (after a write this process made). */
  publish(execution: SkillExecution): void {
    if (!this.hub.active) return;
    const subject = { owner: execution.apiKeyId, skillName: execution.skillName };
    const previous = this.lastStatus.get(execution.id);
    if (previous === execution.status && !isFinalExecutionStatus(execution.status)) return;
    if (isFinalExecutionStatus(execution.status)) {
      this.lastStatus.delete(execution.id);
      this.hub.publish({ type: "finished", executionId: execution.id, execution }, subject);
      return;
    }
    if (this.hub.follows(execution.id)) this.lastStatus.set(execution.id, execution.status);
    const event: ExecutionStreamEvent = {
      type: "status",
      executionId: execution.id,
      status: execution.status,
      at: new Date().toISOString(),
      execution,
    };
    this.hub.publish(event, subject);
  }

  /** Stops listening and ends every subscription with `error`. */
  async close(error: unknown): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.hub.closeAll(error);
    this.lastStatus.clear();
    await this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private onNotice(notice: RecordNotice): void {
    if (notice.type === "cancel" || !this.hub.follows(notice.executionId)) return;
    void this.refresh(notice.executionId, notice.type === "progress");
  }

  /** Reads one execution and publishes what changed (its progress too, on a progress notice). */
  private async refresh(id: string, progress: boolean): Promise<void> {
    try {
      const execution = await this.store.get(id);
      if (execution === undefined) return;
      if (progress && execution.progress !== null && !isFinalExecutionStatus(execution.status)) {
        this.hub.publish(
          { type: "progress", executionId: id, progress: execution.progress },
          { owner: execution.apiKeyId, skillName: execution.skillName },
        );
        return;
      }
      this.publish(execution);
    } catch (error) {
      // The poll reads it again: one failed read delays the event, it does not lose it.
      this.logger.warn("could not read an execution after its notice", {
        executionId: id,
        error: String(error),
      });
    }
  }

  private async poll(): Promise<void> {
    if (this.polling || !this.hub.active) return;
    this.polling = true;
    try {
      const ids = this.hub.followedIds().slice(0, MAX_POLLED_PER_TICK);
      for (const id of this.lastStatus.keys()) if (!this.hub.follows(id)) this.lastStatus.delete(id);
      await Promise.all(ids.map((id) => this.refresh(id, false)));
    } finally {
      this.polling = false;
    }
  }
}
