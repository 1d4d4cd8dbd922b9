import {
  type ExecutionStreamEvent,
  isSkillboxError,
  SkillboxError,
  type SkillExecutor,
  toCallerError,
  toCallerExecution,
} from "@skillbox/core";
import type { Context } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import { clientSignal } from "./client-signal.js";
import { EventStreamSlots } from "./event-stream-slots.js";
import { type BufferedStreamEvent, ExecutionEventBuffer } from "./execution-event-buffer.js";
import type { HttpEnv } from "./http-env.js";
import { ownExecution } from "./own-execution.js";

/** Default heartbeat interval of an event stream: well under the minute proxies allow an idle response. */
const DEFAULT_HEARTBEAT_INTERVAL_MS = 15_000;
/** Default most event streams one owner may have open at once. */
const DEFAULT_MAX_STREAMS_PER_OWNER = 16;

/** The SSE `id` of the `finished` event: a client reconnecting with it as `Last-Event-ID` has seen the end. */
const FINISHED_EVENT_ID = "finished";

/**
 * Bounds of the event streams, `GET /api/executions/:id/events` and `GET /api/events` (the
 * `executionEvents` option of `createHttpApp`).
 */
export interface ExecutionEventsOptions {
  /** How often an idle stream sends a comment line so proxies keep it open, in ms (default 15,000). */
  heartbeatIntervalMs?: number;
  /**
   * Most streams one owner may have open at once, of both routes together (default 16); one
   * more is 429 `RATE_LIMITED`.
   */
  maxStreamsPerOwner?: number;
}

/**
 * The handler of `GET /api/executions/:id/events`: Server-Sent Events of one execution, from
 * `executor.events()`. The first event is a `status` with the current record (so a client
 * knows where things stand), then `status` and `progress` events as they happen, then
 * `finished` with the final record, and the stream closes. Memory per stream is bounded (see {@link ExecutionEventBuffer}); the client going
 * away ends the subscription.
 */
export function createExecutionEventStreams(
  executor: SkillExecutor,
  options: ExecutionEventsOptions = {},
  slots: EventStreamSlots = eventStreamSlotsOf(options),
): (context: Context<HttpEnv>, id: string) => Promise<Response> {
  const heartbeatIntervalMs = heartbeatIntervalOf(options);

  return async (context, id) => {
    const owner = context.get("owner");
    // Checked before the stream starts, so a missing or foreign id is a plain 404.
    await ownExecution(executor, id, owner);
    // EventSource reconnects whenever a stream closes; 204 is what makes it stop, and a client
    // that saw `finished` has nothing more to learn.
    if (context.req.header("last-event-id") === FINISHED_EVENT_ID) return context.body(null, 204);
    const release = slots.acquire(owner, `long-poll GET /api/executions/${id}?wait=30 instead`);
    // nginx buffers responses unless told not to, which would hold every event back.
    context.header("X-Accel-Buffering", "no");
    return streamSSE(context, async (stream) => {
      const controller = new AbortController();
      const client = clientSignal(context);
      const stop = () => controller.abort(new Error("The client closed the event stream"));
      try {
        if (client.aborted) return;
        client.addEventListener("abort", stop, { once: true });
        stream.onAbort(stop);
        await relay({ executor, id, owner, stream, controller, heartbeatIntervalMs });
      } finally {
        client.removeEventListener("abort", stop);
        release();
      }
    });
  };
}

/** The heartbeat interval `options` ask for, or the default. */
export function heartbeatIntervalOf(options: ExecutionEventsOptions = {}): number {
  return options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
}

/** The per-owner stream cap `options` ask for (or the default), as slots the streaming routes share. */
export function eventStreamSlotsOf(options: ExecutionEventsOptions = {}): EventStreamSlots {
  return new EventStreamSlots(options.maxStreamsPerOwner ?? DEFAULT_MAX_STREAMS_PER_OWNER);
}

interface RelayOptions {
  executor: SkillExecutor;
  id: string;
  owner: string;
  stream: SSEStreamingApi;
  /** Aborted when the client goes away; the relay aborts it when it ends, ending the subscription. */
  controller: AbortController;
  heartbeatIntervalMs: number;
}

/** Subscribes, then writes the buffered events at the pace the client reads them. */
async function relay(options: RelayOptions): Promise<void> {
  const { executor, id, owner, stream } = options;
  const signal = options.controller.signal;
  const buffer = new ExecutionEventBuffer();
  const events = executor.events(id, { apiKeyId: owner, signal });
  // The executor's first event is a `status` with the current record (or `finished` alone).
  // The reading loop never rejects: it hands a failure to the buffer.
  void buffer.readFrom(events, { untilFinished: true });
  try {
    await writeBufferedEvents(stream, buffer, {
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      signal,
      write: async (event) => {
        await write(stream, event);
        return event.type !== "finished";
      },
    });
  } finally {
    // Abort first: an async generator's return() waits for its pending next(), which only the
    // signal ends. The reading loop settles on its own and catches what it gets.
    options.controller.abort();
    buffer.end();
    events.return().catch(() => undefined);
  }
}

/** One event as SSE: the event's type is the SSE event name, its data the event in the caller's view. */
function write(stream: SSEStreamingApi, event: ExecutionStreamEvent): Promise<void> {
  const data =
    event.type === "progress" ? event : { ...event, execution: toCallerExecution(event.execution) };
  return stream.writeSSE({
    event: event.type,
    data: JSON.stringify(data),
    ...(event.type === "finished" ? { id: FINISHED_EVENT_ID } : {}),
  });
}

/** Options of {@link writeBufferedEvents}. */
export interface WriteBufferedEventsOptions<Event> {
  /** A `: heartbeat` comment goes out after this long without an event. */
  heartbeatIntervalMs: number;
  /** The client went away (or the relay ended): stop. */
  signal: AbortSignal;
  /** Writes one event; resolves false when that event was the stream's last. */
  write(event: Event): Promise<boolean>;
}

/**
 * Shared by the streaming routes: writes `buffer`'s events to the client at the pace it reads,
 * heartbeats while idle, and when the events end early says why (`stream-error`), until the
 * events end, `write` says it wrote the last one or the client leaves.
 */
export async function writeBufferedEvents<Event extends BufferedStreamEvent>(
  stream: SSEStreamingApi,
  buffer: ExecutionEventBuffer<Event>,
  options: WriteBufferedEventsOptions<Event>,
): Promise<void> {
  for (;;) {
    if (options.signal.aborted || stream.aborted) return;
    const next = await buffer.next(options.heartbeatIntervalMs, options.signal);
    if (next === "idle") {
      await stream.write(": heartbeat\n\n");
      continue;
    }
    if (next === "end") {
      if (buffer.failure !== undefined && !options.signal.aborted) await writeFailure(stream, buffer.failure);
      return;
    }
    if (!(await options.write(next))) return;
  }
}

/**
 * The stream ended without the final record (the executor closed, the database failed): say
 * why before closing. Named `stream-error`, not `error`, which EventSource uses for its own
 * connection errors.
 */
function writeFailure(stream: SSEStreamingApi, failure: unknown): Promise<void> {
  if (!isSkillboxError(failure)) console.error("skillbox http: an execution event stream failed", failure);
  const error = isSkillboxError(failure)
    ? failure
    : new SkillboxError("INTERNAL_ERROR", "The event stream failed; the server's log has the details");
  return stream.writeSSE({ event: "stream-error", data: JSON.stringify({ error: toCallerError(error) }) });
}
