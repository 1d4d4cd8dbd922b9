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
/** Reads of the record in flight at once: a burst of notices waits its turn instead of draining the pool. */
const MAX_CONCURRENT_READS = 8;
/**
 * Statuses remembered for executions followed only by general watchers (by owner, skill, or
 * nothing): enough to drop repeated notices of the executions in flight, the oldest go first.
 */
const MAX_REMEMBERED_STATUSES = 10_000;

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
  /**
   * Executions waiting for a read, with whether a progress notice asked for it: one entry per
   * id, so a burst of notices about one execution costs one read.
   */
  private readonly pending = new Map<string, boolean>();
  /** Executions being read now: a notice meanwhile queues one more read, not a second one in parallel. */
  private readonly reading = new Set<string>();

  constructor(options: RecordFollowerOptions) {
    this.store = options.store;
    this.logger = options.logger;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
  }

  /** Starts listening for notices; resolves once the listener is in place. */
  async start(): Promise<void> {
    this.unsubscribe = await this.store.subscribe((notice) => this.onNotice(notice));
    this.timer = setInterval(() => this.poll(), this.pollIntervalMs);
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
    if (this.hub.follows(execution.id, execution.apiKeyId)) this.remember(execution.id, execution.status);
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
    this.pending.clear();
    await this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private onNotice(notice: RecordNotice): void {
    // The notice names the owner: a watcher of one owner's executions makes no one read the others'.
    if (notice.type === "cancel" || !this.hub.follows(notice.executionId, notice.apiKeyId)) return;
    this.request(notice.executionId, notice.type === "progress");
  }

  /** Remembers the status published last; the oldest entry goes once there are too many. */
  private remember(id: string, status: string): void {
    this.lastStatus.delete(id);
    this.lastStatus.set(id, status);
    if (this.lastStatus.size <= MAX_REMEMBERED_STATUSES) return;
    for (const old of this.lastStatus.keys()) {
      if (this.lastStatus.size <= MAX_REMEMBERED_STATUSES) break;
      this.lastStatus.delete(old);
    }
  }

  /** Queues a read of one execution (merged with one already waiting) and starts reads up to the cap. */
  private request(id: string, progress: boolean): void {
    this.pending.set(id, (this.pending.get(id) ?? false) || progress);
    this.drain();
  }

  private drain(): void {
    for (const [id, progress] of this.pending) {
      if (this.reading.size >= MAX_CONCURRENT_READS) return;
      if (this.reading.has(id)) continue;
      this.pending.delete(id);
      this.reading.add(id);
      void this.refresh(id, progress).finally(() => {
        this.reading.delete(id);
        this.drain();
      });
    }
  }

  /** Reads one execution and publishes what changed (its progress too, on a progress notice). */
  private async refresh(id: string, progress: boolean): Promise<void> {
    try {
      const execution = await this.store.get(id);
      if (execution === undefined) return;
      if (progress && execution.progress !== null && !isFinalExecutionStatus(execution.status)) {
        // A status notice merged into this read (see request()) is told too; a repeat is not.
        this.publish(execution);
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

  private poll(): void {
    // Pruned first: once the last watcher left, nothing else would forget what it remembered.
    if (!this.hub.active) {
      this.lastStatus.clear();
      return;
    }
    const followed = new Set(this.hub.followedIds());
    // General watchers' entries are bounded by remember(); entries of ids nobody follows any more go.
    // follows("") asks about an id no execution has: true only while a general watcher exists.
    if (!this.hub.follows("")) {
      for (const id of this.lastStatus.keys()) if (!followed.has(id)) this.lastStatus.delete(id);
    }
    for (const id of [...followed].slice(0, MAX_POLLED_PER_TICK)) this.request(id, false);
  }
}
