import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { ApiClient } from "../api/api-client.js";
import { ApiError } from "../api/api-error.js";
import type { LiveEvent } from "../api/api-types.js";

/** The state of the live stream, for the header's indicator. */
export type LiveState = "connecting" | "live" | "reconnecting" | "stopped";

type Listener = (event: LiveEvent) => void;

/** Waits between reconnects: doubling from 1 s to 15 s. */
const FIRST_RETRY_MS = 1000;
const LAST_RETRY_MS = 15_000;

/**
 * The Studio's one connection to `GET /api/events`, shared by every view. Read with `fetch`,
 * not `EventSource`, because only `fetch` can send the `Authorization` header. It reconnects on
 * its own; each (re)connection is announced as a `resync` event, because events sent while it
 * was away are not replayed — views list again instead.
 */
export class LiveEvents {
  readonly #api: ApiClient;
  readonly #listeners = new Set<Listener>();
  readonly #stateListeners = new Set<(state: LiveState) => void>();
  #state: LiveState = "stopped";
  #controller: AbortController | undefined;
  #onUnauthorized: (error: ApiError) => void;

  constructor(api: ApiClient, options: { onUnauthorized: (error: ApiError) => void }) {
    this.#api = api;
    this.#onUnauthorized = options.onUnauthorized;
  }

  get state(): LiveState {
    return this.#state;
  }

  /** Hears every event; returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Hears state changes; returns the unsubscribe function. */
  onState(listener: (state: LiveState) => void): () => void {
    this.#stateListeners.add(listener);
    return () => this.#stateListeners.delete(listener);
  }

  /** Connects (once; later calls while running do nothing). */
  start(): void {
    if (this.#controller !== undefined) return;
    const controller = new AbortController();
    this.#controller = controller;
    void this.#run(controller.signal);
  }

  /** Disconnects for good. */
  stop(): void {
    this.#controller?.abort();
    this.#controller = undefined;
    this.#setState("stopped");
  }

  async #run(signal: AbortSignal): Promise<void> {
    let delay = FIRST_RETRY_MS;
    this.#setState("connecting");
    while (!signal.aborted) {
      try {
        const response = await this.#api.send("/api/events", {
          headers: { accept: "text/event-stream" },
          signal,
        });
        await this.#read(response, signal, () => {
          delay = FIRST_RETRY_MS;
        });
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ApiError && error.unauthorized) {
          this.stop();
          this.#onUnauthorized(error);
          return;
        }
      }
      if (signal.aborted) return;
      this.#setState("reconnecting");
      await sleep(delay, signal);
      delay = Math.min(delay * 2, LAST_RETRY_MS);
    }
  }

  async #read(response: Response, signal: AbortSignal, onReady: () => void): Promise<void> {
    const body = response.body;
    if (body === null) return;
    const parser = createParser({
      onEvent: (message) => {
        if (message.event === "ready") {
          onReady();
          this.#setState("live");
          this.#emit({ type: "resync" });
          return;
        }
        const event = toLiveEvent(message);
        if (event !== undefined) this.#emit(event);
      },
    });
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    const cancel = () => void reader.cancel().catch(() => undefined);
    signal.addEventListener("abort", cancel, { once: true });
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        parser.feed(value);
      }
    } finally {
      signal.removeEventListener("abort", cancel);
    }
  }

  #emit(event: LiveEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        // One view's bug must not stop the stream for the others.
        console.error("Skillbox Studio: a live-event listener failed", error);
      }
    }
  }

  #setState(state: LiveState): void {
    if (this.#state === state) return;
    this.#state = state;
    for (const listener of this.#stateListeners) listener(state);
  }
}

/** The event an SSE message carries, or undefined for one the Studio does not use. */
function toLiveEvent(message: EventSourceMessage): LiveEvent | undefined {
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch {
    return undefined;
  }
  if (typeof data !== "object" || data === null) return undefined;
  switch (message.event) {
    case "status":
    case "progress":
    case "finished":
      return { ...(data as object), type: message.event } as LiveEvent;
    case "activity":
      return { type: "activity", activity: data as Extract<LiveEvent, { type: "activity" }>["activity"] };
    case "lagged":
      return { type: "lagged", dropped: Number((data as { dropped?: unknown }).dropped ?? 0) };
    default:
      return undefined;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}
