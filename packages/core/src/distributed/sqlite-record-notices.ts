import type { ExecutionStatus } from "../types.js";
import type { RecordNotice } from "./execution-record-store.js";
import type { SqliteRecordContext } from "./sqlite-record-context.js";

/** Rows of the event log one read takes; a poll reads at most this many times as much. */
const ROWS_PER_READ = 500;
const READS_PER_POLL = 20;

/**
 * One subscriber of the SQLite record store: every `intervalMs` it reads the events written
 * since the last poll (by any process on the file: status changes and progress, in `seq`
 * order) and the cancel requests made since, and tells them as notices. Cancel requests are
 * rows of `skill_execution_cancels` (not events), so a request the one-host executor stores on
 * the same file is told too. The timer never keeps a process alive.
 */
export class SqliteRecordNotices {
  private cursor: number;
  /** The cancel requests seen (id → when requested): a notice goes out for each new one. */
  private cancels = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly context: SqliteRecordContext,
    private readonly listener: (notice: RecordNotice) => void,
    intervalMs: number,
  ) {
    const { statements } = context;
    // From now on: what happened before the subscription is in the records.
    this.cursor = (statements.lastEventSeq.get() as { seq: number }).seq;
    for (const request of statements.cancels.all())
      this.cancels.set(request.execution_id, request.requested_at);
    this.timer = setInterval(() => this.poll(), intervalMs);
    this.timer.unref();
  }

  /** Stops polling; no notice is told after it returns. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** One poll; a failed read (a locked or closing file) is tried again at the next. */
  poll(): void {
    if (this.stopped) return;
    if (!this.context.database.open) {
      this.stop();
      return;
    }
    try {
      this.pollEvents();
      this.pollCancels();
    } catch {
      // Notices are hints: the next poll reads from the same cursor.
    }
  }

  private pollEvents(): void {
    const { statements } = this.context;
    for (let read = 0; read < READS_PER_POLL && !this.stopped; read++) {
      const rows = statements.eventsAfter.all(this.cursor, ROWS_PER_READ);
      for (const row of rows) {
        this.cursor = row.seq;
        if (row.type === "progress") {
          this.tell({ type: "progress", executionId: row.execution_id, apiKeyId: row.api_key_id });
        } else if (row.type === "status") {
          const { status } = JSON.parse(row.data) as { status: ExecutionStatus };
          this.tell({ type: "status", executionId: row.execution_id, apiKeyId: row.api_key_id, status });
        }
      }
      if (rows.length < ROWS_PER_READ) return;
    }
  }

  private pollCancels(): void {
    const seen = new Map<string, number>();
    for (const request of this.context.statements.cancels.all()) {
      seen.set(request.execution_id, request.requested_at);
      if (this.cancels.get(request.execution_id) !== request.requested_at) {
        this.tell({ type: "cancel", executionId: request.execution_id });
      }
    }
    this.cancels = seen;
  }

  private tell(notice: RecordNotice): void {
    if (this.stopped) return;
    try {
      this.listener(notice);
    } catch {
      // One listener's failure must not stop the notices of the others, nor this poll.
    }
  }
}
