import {
  type Attributes,
  type Context,
  context,
  type Span,
  SpanKind,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { markFailed } from "./mark-failed.js";
import { replayRelayedSpans } from "./replay-relayed-spans.js";
import { randomSpanId, withIdHint } from "./skillbox-id-generator.js";
import { DEFAULT_SPAN_RELAY_LIMITS, type RelayedSpan, type RelayedSpans } from "./span-relay.js";
import { formatTraceparent, parseTraceparent } from "./trace-context-propagator.js";

/**
 * The host's side of one traced crossing into a worker thread or a sandbox: the span the work
 * on the far side runs under (`worker dispatch`, `sandbox run`), and what to send there.
 */
export interface RelayBoundary {
  span: Span;
  /** The active context with {@link span} in it: relayed spans are replayed under it. */
  context: Context;
  /** The W3C `traceparent` of {@link span}, for the task or the job. */
  traceparent: string;
  /** Its `tracestate`, when the trace has one. */
  tracestate?: string;
  /**
   * Whether the SDK's id generator hands out the ids core asks for (`createSkillboxIdGenerator`):
   * then spans replayed from the far side keep the ids they had there, and a nested `ctx.call`
   * can be parented on the far side's span.
   */
  idsKept: boolean;
}

/** Whether the active span records: the one check a crossing makes before it pays for tracing. */
export function isTracing(): boolean {
  return trace.getSpan(context.active())?.isRecording() === true;
}

/**
 * Starts `name` as a child of the active span when that span records (an SDK is installed and
 * sampled it); undefined otherwise, having allocated nothing. The span's own random id doubles as
 * a probe of whether the SDK's id generator takes core's hints.
 */
export function startRelayBoundary(
  tracer: Tracer,
  name: string,
  attributes: Attributes,
): RelayBoundary | undefined {
  const parent = context.active();
  if (trace.getSpan(parent)?.isRecording() !== true) return undefined;
  const probe = randomSpanId();
  const span = withIdHint({ spanId: probe }, () =>
    tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent),
  );
  const spanContext = span.spanContext();
  const boundary: RelayBoundary = {
    span,
    context: trace.setSpan(parent, span),
    traceparent: formatTraceparent(spanContext),
    idsKept: spanContext.spanId === probe,
  };
  const state = spanContext.traceState?.serialize();
  if (state !== undefined && state !== "") boundary.tracestate = state;
  return boundary;
}

/** Replays what came back from the far side under the boundary's span (see {@link replayRelayedSpans}). */
export function replayAtBoundary(
  tracer: Tracer,
  boundary: RelayBoundary,
  relayed: RelayedSpans | undefined,
): void {
  if (relayed === undefined) return;
  // The far side's relay keeps this many, but a sandboxed handler can write its own result line:
  // the host bounds what it replays (and how deep the replay's parent chain goes) itself, and
  // replays only spans of the relay's shape (a malformed one would throw in the middle of it).
  const { maxSpans } = DEFAULT_SPAN_RELAY_LIMITS;
  const sent: unknown[] = Array.isArray(relayed.spans) ? relayed.spans : [];
  const kept = sent.slice(0, maxSpans).filter(isRelayedSpan);
  replayRelayedSpans(tracer, kept, boundary.context);
  const reported = Number.isSafeInteger(relayed.dropped) && relayed.dropped > 0 ? relayed.dropped : 0;
  const dropped = reported + sent.length - kept.length;
  if (dropped > 0) boundary.span.setAttribute("skillbox.telemetry.spans_dropped", dropped);
}

/**
 * Ends the boundary's span (or any span of the crossing, such as `sandbox start`), marked failed
 * (see `markFailed`) when the crossing failed.
 */
export function endRelayBoundary(boundary: Pick<RelayBoundary, "span">, error?: unknown): void {
  if (error !== undefined) markFailed(boundary.span, error);
  boundary.span.end();
}

/**
 * The context a nested execution that a far-side handler asked for (`ctx.call` from a worker)
 * runs under: the far side's span named by `traceparent` when its id will exist on the host (the
 * SDK keeps relayed ids), else the boundary's own span.
 */
export function callContextAtBoundary(
  boundary: RelayBoundary,
  traceparent: string | undefined,
  tracestate?: string,
): Context {
  if (!boundary.idsKept || traceparent === undefined) return boundary.context;
  const remote = parseTraceparent(traceparent, tracestate);
  return remote === undefined ? boundary.context : trace.setSpanContext(boundary.context, remote);
}

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;

function isHrTime(value: unknown): boolean {
  return Array.isArray(value) && value.length === 2 && value.every((part) => Number.isFinite(part));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a span the far side sent has the shape a relay writes (see `RelayedSpan`). */
function isRelayedSpan(value: unknown): value is RelayedSpan {
  if (!isPlainObject(value)) return false;
  const { name, kind, traceId, spanId, parentSpanId, startTime, endTime, attributes, events, status, links } =
    value;
  return (
    typeof name === "string" &&
    typeof kind === "number" &&
    typeof traceId === "string" &&
    TRACE_ID.test(traceId) &&
    typeof spanId === "string" &&
    SPAN_ID.test(spanId) &&
    (parentSpanId === undefined || (typeof parentSpanId === "string" && SPAN_ID.test(parentSpanId))) &&
    isHrTime(startTime) &&
    isHrTime(endTime) &&
    isPlainObject(attributes) &&
    Array.isArray(events) &&
    events.every((event) => isPlainObject(event) && typeof event.name === "string" && isHrTime(event.time)) &&
    isPlainObject(status) &&
    typeof status.code === "number" &&
    (links === undefined ||
      (Array.isArray(links) &&
        links.every(
          (link) =>
            isPlainObject(link) &&
            typeof link.traceId === "string" &&
            typeof link.spanId === "string" &&
            typeof link.traceFlags === "number",
        )))
  );
}
