import { type ExecutionStreamEvent, type SkillExecutor, toCallerExecution } from "@skillbox/core";
import type { Context } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import { clientSignal } from "./client-signal.js";
import type { EventStreamSlots } from "./event-stream-slots.js";
import { type EventKind, eventsQuerySchema } from "./events-query-schema.js";
import { type BufferedStreamEvent, ExecutionEventBuffer } from "./execution-event-buffer.js";
import { writeBufferedEvents } from "./execution-event-stream.js";
import type { HttpEnv } from "./http-env.js";
import type { ActivitySource, LoaderActivity } from "./loader-activity.js";
import { readQuery } from "./request-schemas.js";

/** Owners whose packages every caller sees (DESIGN.md, "Owners"). */
const GLOBAL_OWNERS = new Set(["system", "public"]);

/** Options of {@link createCallerEventStreams}. */
export interface CallerEventStreamsOptions {
  executor: SkillExecutor;
  /** The loader's activity; without one, `activity` streams only a `ready` event and heartbeats. */
  activity?: ActivitySource;
  slots: EventStreamSlots;
  heartbeatIntervalMs: number;
}

/**
 * The handler of `GET /api/events`: one Server-Sent Events stream of what the caller may see
 * happen, for a live view. The first event is `ready` (the subscriptions are live: anything
 * after it is on the stream); then, as they happen, `status`, `progress` and `finished` of
 * every execution of the caller (`executor.watchExecutions`), and `activity` for each loader
 * activity about the caller's own or global packages. `?skill=` keeps the events of one skill
 * (activities naming no skill, load errors and warnings, stay), `?kinds=` picks
 * `executions`, `activity` or both (the default). A client that fell behind gets `lagged`
 * with how many events it missed (time to list again). The stream never ends by itself.
 */
export function createCallerEventStreams(
  options: CallerEventStreamsOptions,
): (context: Context<HttpEnv>) => Response {
  return (context) => {
    const owner = context.get("owner");
    const query = readQuery(context, eventsQuerySchema);
    const kinds = query.kinds ?? ["executions", "activity"];
    const release = options.slots.acquire(owner, "poll GET /api/executions instead");
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
        await relay({ ...options, owner, skill: query.skill, kinds, stream, controller });
      } finally {
        client.removeEventListener("abort", stop);
        release();
      }
    });
  };
}

interface RelayOptions extends CallerEventStreamsOptions {
  owner: string;
  skill: string | undefined;
  kinds: EventKind[];
  stream: SSEStreamingApi;
  /** Aborted when the client goes away; the relay aborts it when it ends, ending the subscriptions. */
  controller: AbortController;
}

/** Subscribes to what `kinds` asks, then writes the buffered events at the pace the client reads. */
async function relay(options: RelayOptions): Promise<void> {
  const { owner, skill, kinds, stream } = options;
  const signal = options.controller.signal;
  const buffer = new ExecutionEventBuffer<BufferedStreamEvent>();
  let events: AsyncGenerator<ExecutionStreamEvent, void, undefined> | undefined;
  let unsubscribe: (() => void) | undefined;
  try {
    if (kinds.includes("executions")) {
      events = options.executor.watchExecutions({ apiKeyId: owner, skill, signal });
      // The first next() subscribes (synchronously), so the `ready` below is true.
      void buffer.readFrom(events);
    }
    if (kinds.includes("activity") && options.activity !== undefined) {
      unsubscribe = options.activity.subscribe((activity) => {
        if (isVisible(activity, owner, skill)) buffer.push({ type: "activity", activity });
      });
    }
    await stream.writeSSE({ event: "ready", data: JSON.stringify({ kinds, skill: skill ?? null }) });
    await writeBufferedEvents(stream, buffer, {
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      signal,
      write: async (event) => {
        const dropped = buffer.takeDropped();
        if (dropped > 0) await stream.writeSSE({ event: "lagged", data: JSON.stringify({ dropped }) });
        await write(stream, event);
        return true;
      },
    });
  } finally {
    // Abort first: an async generator's return() waits for its pending next(), which only the
    // signal ends. The reading loop settles on its own and catches what it gets.
    options.controller.abort();
    unsubscribe?.();
    buffer.end();
    events?.return().catch(() => undefined);
  }
}

/** Whether `owner` may hear of `activity`: its own packages and the global ones, of `skill` if given. */
function isVisible(activity: LoaderActivity, owner: string, skill: string | undefined): boolean {
  if (!GLOBAL_OWNERS.has(activity.owner) && activity.owner !== owner) return false;
  if (skill === undefined || activity.type === "load-error" || activity.type === "warning") return true;
  return activity.package.kind === "skill" && activity.package.name === skill;
}

/** One event as SSE: its type is the SSE event name, its data the event in the caller's view. */
function write(stream: SSEStreamingApi, event: BufferedStreamEvent): Promise<void> {
  if (event.type === "activity") {
    return stream.writeSSE({ event: "activity", data: JSON.stringify(event.activity) });
  }
  const data =
    event.type === "progress" ? event : { ...event, execution: toCallerExecution(event.execution) };
  return stream.writeSSE({ event: event.type, data: JSON.stringify(data) });
}
