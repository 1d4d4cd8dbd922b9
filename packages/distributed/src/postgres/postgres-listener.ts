import type { RecordNotice } from "@skillbox/core";
import pg from "pg";
import { storeError } from "./postgres-errors.js";
import { eventNotice, NOTICE_CHANNEL, parseNotice } from "./postgres-events.js";
import { RECORD_TYPES } from "./postgres-session.js";

/** First wait before reconnecting a lost listener, doubled on each failure up to the cap. */
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5000;
/** Events a reconnected listener reads back per query; it pages on until it has read them all. */
const CATCH_UP_PAGE = 1000;
/**
 * How long the server waits for the listener's machine to acknowledge what it sent before it
 * drops the session (`tcp_user_timeout`), and how soon it probes an idle one: a listener whose
 * process is stopped (SIGSTOP) or whose machine vanished stops holding the NOTIFY queue back.
 */
const SERVER_TCP_USER_TIMEOUT_MS = 30_000;
const KEEPALIVE_IDLE_MS = 10_000;

/** How {@link PostgresListener} connects. */
export interface PostgresListenerOptions {
  url: string;
  /** `application_name` of the listening connection (`pg_stat_activity` shows it). */
  applicationName: string;
  /** `host:port`, for messages. */
  target: string;
}

interface StoredEvent {
  seq: number;
  execution_id: string;
  api_key_id: string;
  type: string;
  data: string;
}

/**
 * One dedicated connection (not the pool's: a LISTEN lives as long as its session) listening on
 * the store's channel, shared by every subscriber of one store. When it breaks (the server
 * restarted, an administrator ended it) it reconnects with a growing backoff and reads back the
 * events written meanwhile from `skill_execution_events`, so status and progress changes are
 * still told (at least once; a notice is a hint, the record is the truth).
 */
export class PostgresListener {
  private readonly listeners = new Set<(notice: RecordNotice) => void>();
  private client: pg.Client | undefined;
  private starting: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private backoffMs = FIRST_BACKOFF_MS;
  /** The newest event sequence number seen: where a catch-up after a reconnect reads on. */
  private lastSeq = 0;
  private closed = false;

  constructor(private readonly options: PostgresListenerOptions) {}

  /** Adds a listener; resolves once the connection listens. The returned function removes it. */
  async add(listener: (notice: RecordNotice) => void): Promise<() => Promise<void>> {
    if (this.closed) throw new Error("PostgresRecordStore: subscribe() after close()");
    this.listeners.add(listener);
    try {
      if (this.client === undefined) {
        // Catch up when events were seen before: a reconnect may be pending, and what was written
        // meanwhile must still reach the listeners that were there all along.
        this.starting ??= this.connect(this.lastSeq > 0).finally(() => {
          this.starting = undefined;
        });
        await this.starting;
      }
    } catch (error) {
      this.listeners.delete(listener);
      throw error;
    }
    let removed = false;
    return async () => {
      if (removed) return;
      removed = true;
      this.listeners.delete(listener);
      if (this.listeners.size === 0) await this.disconnect();
    };
  }

  /** Stops listening for good. */
  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    await this.disconnect();
  }

  private async connect(catchUp: boolean): Promise<void> {
    const client = new pg.Client({
      connectionString: this.options.url,
      application_name: this.options.applicationName,
      types: RECORD_TYPES,
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    });
    // Before connect(): a socket error with no listener would crash the process.
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    client.on("notification", (message) => {
      if (message.channel === NOTICE_CHANNEL) this.deliverWire(message.payload);
    });
    try {
      await client.connect();
      await client.query(
        `SET tcp_user_timeout = ${SERVER_TCP_USER_TIMEOUT_MS}; SET tcp_keepalives_idle = ${KEEPALIVE_IDLE_MS / 1000}`,
      );
      await client.query(`LISTEN ${NOTICE_CHANNEL}`);
      if (!catchUp) {
        const result = await client.query<{ seq: number }>(
          "SELECT COALESCE(max(seq), 0) AS seq FROM skill_execution_events",
        );
        this.lastSeq = Math.max(this.lastSeq, result.rows[0]?.seq ?? 0);
      }
    } catch (error) {
      client.removeAllListeners("end");
      await client.end().catch(() => undefined);
      throw storeError(error, this.options.target);
    }
    if (this.closed || this.listeners.size === 0) {
      // Everyone left while it connected.
      client.removeAllListeners("end");
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.backoffMs = FIRST_BACKOFF_MS;
    if (catchUp) await this.catchUp(client);
  }

  /** Tells what was written while no connection listened, a page at a time. */
  private async catchUp(client: pg.Client): Promise<void> {
    try {
      for (;;) {
        const result = await client.query<StoredEvent>(
          "SELECT seq, execution_id, api_key_id, type, data FROM skill_execution_events WHERE seq > $1 ORDER BY seq LIMIT $2",
          [this.lastSeq, CATCH_UP_PAGE],
        );
        for (const row of result.rows) {
          this.lastSeq = Math.max(this.lastSeq, row.seq);
          const notice = eventNotice(row);
          if (notice !== undefined) this.deliver(notice);
        }
        if (result.rows.length < CATCH_UP_PAGE || this.client !== client) return;
      }
    } catch {
      // The connection broke again: its "end" schedules the next attempt.
    }
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.removeAllListeners("end");
    client.end().catch(() => undefined);
    if (!this.closed && this.listeners.size > 0) this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.retry !== undefined) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (this.closed || this.listeners.size === 0 || this.client !== undefined) return;
      // The same slot as a first subscriber's connect: never two listening connections at once.
      this.starting ??= this.connect(true).finally(() => {
        this.starting = undefined;
      });
      this.starting.catch(() => {
        this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
        this.scheduleReconnect();
      });
    }, this.backoffMs);
    // A process with nothing else to do is not kept alive by a reconnect.
    this.retry.unref();
  }

  private async disconnect(): Promise<void> {
    if (this.retry !== undefined) clearTimeout(this.retry);
    this.retry = undefined;
    await this.starting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    if (client === undefined) return;
    client.removeAllListeners("end");
    await client.end().catch(() => undefined);
  }

  private deliverWire(payload: string | undefined): void {
    const parsed = parseNotice(payload);
    if (parsed === undefined) return;
    if (parsed.seq !== undefined) this.lastSeq = Math.max(this.lastSeq, parsed.seq);
    this.deliver(parsed.notice);
  }

  private deliver(notice: RecordNotice): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(notice);
      } catch {
        // One listener's failure is its own: the others still hear of the change.
      }
    }
  }
}
