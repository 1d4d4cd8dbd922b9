import type { LiveEvent, LoaderActivity } from "../api/api-types.js";
import type { LiveEvents } from "../live/live-events.js";

/** Activity entries kept in memory: the oldest go first, so a long session never grows without bound. */
export const ACTIVITY_FEED_LIMIT = 500;

/** One loader event as the feed keeps it. */
export interface ActivityEntry {
  /** Increases by one per event heard: a stable list key even for two identical events. */
  sequence: number;
  activity: LoaderActivity;
}

/** What the feed holds at one moment (a new object on every change, so views can compare). */
export interface ActivitySnapshot {
  /** Oldest first, at most {@link ACTIVITY_FEED_LIMIT}. */
  entries: readonly ActivityEntry[];
  /** Events heard and then let go because of the limit. */
  evicted: number;
  /** Events the server dropped because the tab read too slowly (`lagged`), and when it last said so. */
  dropped: number;
  lastLaggedAt: string | null;
  /** When the feed started listening (the stream has no history: nothing before is known). */
  since: string | null;
  /** Reconnections after the first connection, and the last one: events in between were missed. */
  reconnects: number;
  lastReconnectAt: string | null;
}

const EMPTY: ActivitySnapshot = {
  entries: [],
  evicted: 0,
  dropped: 0,
  lastLaggedAt: null,
  since: null,
  reconnects: 0,
  lastReconnectAt: null,
};

/**
 * The loader's activity as heard on the shared live stream, kept for the whole life of the tab
 * rather than of the Activity page: the stream replays nothing, so a feed that started with the
 * page would lose everything that happened while another page was shown.
 */
class ActivityFeed {
  #snapshot: ActivitySnapshot = EMPTY;
  #sequence = 0;
  #connections = 0;
  #live: LiveEvents | undefined;
  #unsubscribe: (() => void) | undefined;
  readonly #listeners = new Set<(snapshot: ActivitySnapshot) => void>();

  /** The current contents. */
  get snapshot(): ActivitySnapshot {
    return this.#snapshot;
  }

  /**
   * Listens to `live` from now on; a call with the stream already followed does nothing, a new
   * stream (another sign-in: maybe another owner) starts an empty feed. Returns the function
   * that stops listening (the feed keeps what it has).
   */
  follow(live: LiveEvents): () => void {
    if (this.#live !== live) {
      this.#unsubscribe?.();
      this.#live = live;
      // Followed after the stream connected (from a page, not at start): that `resync` was heard already.
      this.#connections = live.state === "live" ? 1 : 0;
      this.#sequence = 0;
      this.#replace({ ...EMPTY, since: new Date().toISOString() });
      this.#unsubscribe = live.subscribe((event) => this.#hear(event));
    }
    return () => {
      if (this.#live !== live) return;
      this.#unsubscribe?.();
      this.#unsubscribe = undefined;
      this.#live = undefined;
    };
  }

  /** Hears every change; returns the unsubscribe function. */
  subscribe(listener: (snapshot: ActivitySnapshot) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #hear(event: LiveEvent): void {
    const snapshot = this.#snapshot;
    if (event.type === "activity") {
      this.#sequence += 1;
      const entries = [...snapshot.entries, { sequence: this.#sequence, activity: event.activity }];
      const excess = Math.max(entries.length - ACTIVITY_FEED_LIMIT, 0);
      this.#replace({
        ...snapshot,
        entries: excess === 0 ? entries : entries.slice(excess),
        evicted: snapshot.evicted + excess,
      });
    } else if (event.type === "lagged") {
      this.#replace({
        ...snapshot,
        dropped: snapshot.dropped + event.dropped,
        lastLaggedAt: new Date().toISOString(),
      });
    } else if (event.type === "resync") {
      // The first `resync` is the first connection; each later one follows a gap.
      this.#connections += 1;
      if (this.#connections > 1) {
        this.#replace({
          ...snapshot,
          reconnects: snapshot.reconnects + 1,
          lastReconnectAt: new Date().toISOString(),
        });
      }
    }
  }

  #replace(snapshot: ActivitySnapshot): void {
    this.#snapshot = snapshot;
    for (const listener of this.#listeners) listener(snapshot);
  }
}

/** The tab's one feed, shared by every view (see {@link ActivityFeed}). */
export const activityFeed = new ActivityFeed();
