import { isFinalExecutionStatus, type SkillExecution } from "../types.js";
import type { ActiveRuns } from "./active-runs.js";
import type { ExecutionEventHub } from "./execution-event-hub.js";
import type { ExecutionStore } from "./execution-store.js";
import { formatTimestamp } from "./format-timestamp.js";
import type { StoredEventRow } from "./job-store.js";

/** Rows of the event log one read takes. */
const ROWS_PER_READ = 500;

/**
 * Hands this process's subscribers what other processes on the database did: the rows they
 * logged in `skill_execution_events` since the subscription began, and the ends of followed
 * executions that run elsewhere (an `execute()` logs no events; a dead host's rows are ended by
 * recovery). Called from the host's poll while anyone listens.
 */
export class ExecutionEventRelay {
  /** The last event relayed; undefined while nobody listens (a new subscriber starts from now). */
  private cursor: number | undefined;

  constructor(
    private readonly store: ExecutionStore,
    private readonly hub: ExecutionEventHub,
    private readonly running: ActiveRuns<{ readonly id: string }>,
  ) {}

  /** Starts relaying from the newest event, unless it relays already. */
  follow(): void {
    this.cursor ??= this.store.jobs.lastEventSeq();
  }

  /** Nobody listens any more: the next subscriber starts from its own moment. */
  unfollow(): void {
    this.cursor = undefined;
  }

  /** Publishes what other processes logged since the cursor, and the ends of followed executions. */
  relay(): void {
    const { store } = this;
    let cursor = this.cursor ?? store.jobs.lastEventSeq();
    const finished = new Set<string>();
    for (;;) {
      const rows = store.jobs.eventsAfter(cursor, ROWS_PER_READ);
      for (const row of rows) {
        cursor = row.seq;
        if (row.runner !== store.runnerKey) this.relayRow(row, finished);
      }
      if (rows.length < ROWS_PER_READ) break;
    }
    this.cursor = cursor;
    for (const id of this.hub.followedIds()) {
      if (finished.has(id) || this.running.has(id)) continue;
      const execution = store.get(id);
      if (execution !== undefined && isFinalExecutionStatus(execution.status))
        this.publishFinished(execution);
    }
  }

  private relayRow(row: StoredEventRow, finished: Set<string>): void {
    const subject = { owner: row.api_key_id, skillName: row.skill_name };
    if (row.type === "progress") {
      this.hub.publish(
        { type: "progress", executionId: row.execution_id, progress: JSON.parse(row.data) },
        subject,
      );
      return;
    }
    const execution = this.store.get(row.execution_id);
    if (execution === undefined) return;
    if (isFinalExecutionStatus(execution.status)) {
      if (finished.has(execution.id)) return;
      finished.add(execution.id);
      this.publishFinished(execution);
    } else {
      const { status } = JSON.parse(row.data) as { status: SkillExecution["status"] };
      this.hub.publish(
        { type: "status", executionId: execution.id, status, at: formatTimestamp(row.created_at), execution },
        subject,
      );
    }
  }

  private publishFinished(execution: SkillExecution): void {
    this.hub.publish(
      { type: "finished", executionId: execution.id, execution },
      { owner: execution.apiKeyId, skillName: execution.skillName },
    );
  }
}
