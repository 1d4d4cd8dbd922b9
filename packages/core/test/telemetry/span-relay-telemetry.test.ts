import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import {
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { createSkillboxIdGenerator } from "@skillbox/core";
import {
  AsyncContextManager,
  callContextAtBoundary,
  DEFAULT_SPAN_RELAY_LIMITS,
  endRelayBoundary,
  formatTraceparent,
  parseTraceparent,
  type RelayBoundary,
  RelayTracerProvider,
  replayAtBoundary,
  SPAN_RELAY_KEY,
  SpanRelay,
  startRelayBoundary,
  TraceContextPropagator,
} from "@skillbox/core/internal";
import { installRecordingTelemetry, type RecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { afterEach, describe, expect, it } from "vitest";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_ID = "00f067aa0ba902b7";

/** A generator that ignores core's hints, as an SDK set up without `createSkillboxIdGenerator()`. */
const plainIds = {
  generateTraceId: () => randomBytes(16).toString("hex"),
  generateSpanId: () => randomBytes(8).toString("hex"),
};

let telemetry: RecordingTelemetry | undefined;
afterEach(async () => {
  await telemetry?.close();
  telemetry = undefined;
});

/** A host span with a `worker dispatch` boundary under it, as the worker runtime makes them. */
function hostBoundary(): { boundary: RelayBoundary; end(): void } {
  const tracer = trace.getTracer("test");
  const root = tracer.startSpan("attempt 1");
  const boundary = context.with(trace.setSpan(ROOT_CONTEXT, root), () =>
    startRelayBoundary(tracer, "worker dispatch", { "skillbox.runtime": "worker" }),
  );
  if (boundary === undefined) throw new Error("the active span does not record");
  return { boundary, end: () => root.end() };
}

/** What the far side does: a handler span with a child, an event, an error status and a late span. */
async function farSide(traceparent: string, relay = new SpanRelay()) {
  const manager = new AsyncContextManager();
  const tracer = new RelayTracerProvider().getTracer();
  const parent = parseTraceparent(traceparent);
  if (parent === undefined) throw new Error("malformed traceparent");
  const taskContext = trace.setSpanContext(ROOT_CONTEXT, parent).setValue(SPAN_RELAY_KEY, relay);
  await manager.with(taskContext, async () => {
    // The global context manager is the test's SDK one: this thread's is passed explicitly.
    const handler = tracer.startSpan(
      "handler work",
      { kind: SpanKind.CLIENT, attributes: { step: 1 } },
      manager.active(),
    );
    const inner = tracer.startSpan("inner", {}, trace.setSpan(manager.active(), handler));
    await sleep(2);
    inner.addEvent("halfway", { done: 0.5 });
    inner.setStatus({ code: SpanStatusCode.ERROR, message: "it failed" });
    inner.end();
    handler.end();
  });
  return relay;
}

describe("span relay", () => {
  it("records ended spans with ids, parent, kind, attributes, events, status and epoch times", async () => {
    const before = Date.now();
    const { spans, dropped } = (await farSide(`00-${TRACE_ID}-${SPAN_ID}-01`)).take();
    expect(dropped).toBe(0);
    expect(spans.map((span) => span.name)).toEqual(["inner", "handler work"]);
    const [inner, handler] = spans as [(typeof spans)[0], (typeof spans)[0]];
    expect(handler).toMatchObject({ traceId: TRACE_ID, parentSpanId: SPAN_ID, kind: SpanKind.CLIENT });
    expect(handler.attributes).toEqual({ step: 1 });
    expect(inner.parentSpanId).toBe(handler.spanId);
    expect(inner.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(inner.events).toMatchObject([{ name: "halfway", attributes: { done: 0.5 } }]);
    expect(inner.status).toEqual({ code: SpanStatusCode.ERROR, message: "it failed" });
    const startMs = handler.startTime[0] * 1_000 + handler.startTime[1] / 1e6;
    const endMs = handler.endTime[0] * 1_000 + handler.endTime[1] / 1e6;
    expect(startMs).toBeGreaterThanOrEqual(before - 1);
    expect(endMs - startMs).toBeGreaterThanOrEqual(1);
  });

  it("keeps at most the limit of spans and cuts long values, counting what it dropped", () => {
    const relay = new SpanRelay({
      maxSpans: 2,
      maxAttributes: 2,
      maxEvents: 1,
      maxLinks: 1,
      maxValueLength: 5,
      maxBytes: 10_000,
    });
    const tracer = new RelayTracerProvider().getTracer();
    const parent = trace.setSpanContext(ROOT_CONTEXT, parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-01`)!);
    const taskContext = parent.setValue(SPAN_RELAY_KEY, relay);
    for (let index = 0; index < 4; index++) {
      const span = tracer.startSpan(`span ${index}`, {}, taskContext);
      span.setAttributes({ long: "abcdefghij", second: 2, third: 3 });
      span.addEvent("one");
      span.addEvent("two");
      span.end();
    }
    const late = tracer.startSpan("late", {}, taskContext);
    const { spans, dropped } = relay.take();
    late.end();
    expect(spans).toHaveLength(2);
    expect(spans[0]?.attributes).toEqual({ long: "abcde", second: 2 });
    expect(spans[0]?.events).toHaveLength(1);
    expect(dropped).toBe(2);
    expect(relay.take().spans).toEqual([]);
  });

  it("records links, exceptions and a new name, and startActiveSpan with options and a context", () => {
    const relay = new SpanRelay();
    const tracer = new RelayTracerProvider().getTracer();
    const taskContext = trace
      .setSpanContext(ROOT_CONTEXT, parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-01`)!)
      .setValue(SPAN_RELAY_KEY, relay);
    const linked = { traceId: TRACE_ID, spanId: "1111111111111111", traceFlags: 1 };
    tracer.startActiveSpan(
      "first name",
      { links: [{ context: linked, attributes: { why: "batch" } }] },
      taskContext,
      (span) => {
        span.updateName("renamed");
        span.recordException(Object.assign(new Error("bad"), { name: "TypeError" }));
        span.end();
      },
    );
    const [span] = relay.take().spans;
    expect(span).toMatchObject({
      name: "renamed",
      parentSpanId: SPAN_ID,
      links: [{ ...linked, attributes: { why: "batch" } }],
      events: [
        { name: "exception", attributes: { "exception.type": "TypeError", "exception.message": "bad" } },
      ],
    });
  });

  it("gives spans outside a task, or under an unsampled parent, nothing to record", () => {
    const tracer = new RelayTracerProvider().getTracer();
    expect(tracer.startSpan("outside").isRecording()).toBe(false);
    const unsampled = trace
      .setSpanContext(ROOT_CONTEXT, parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-00`)!)
      .setValue(SPAN_RELAY_KEY, new SpanRelay());
    const span = tracer.startSpan("unsampled", {}, unsampled);
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().traceId).toBe(TRACE_ID);
  });
});

describe("replaying relayed spans", () => {
  it("rebuilds the tree under the boundary with the ids the far side gave (createSkillboxIdGenerator)", async () => {
    telemetry = installRecordingTelemetry({ idGenerator: createSkillboxIdGenerator() });
    const { boundary, end } = hostBoundary();
    expect(boundary.idsKept).toBe(true);
    const relayed = (await farSide(boundary.traceparent)).take();
    replayAtBoundary(trace.getTracer("test"), boundary, relayed);
    endRelayBoundary(boundary);
    end();
    const [root] = telemetry.named("attempt 1");
    expect(telemetry.tree(root!)).toBe("attempt 1\n  worker dispatch\n    handler work\n      inner");
    const [inner] = telemetry.named("inner");
    const [handler] = telemetry.named("handler work");
    expect(handler?.spanContext().spanId).toBe(relayed.spans[1]?.spanId);
    expect(inner?.spanContext().spanId).toBe(relayed.spans[0]?.spanId);
    expect(handler?.kind).toBe(SpanKind.CLIENT);
    expect(handler?.attributes).toEqual({ step: 1 });
    expect(handler?.startTime).toEqual(relayed.spans[1]?.startTime);
    expect(handler?.endTime).toEqual(relayed.spans[1]?.endTime);
    expect(inner?.events.map((event) => event.name)).toEqual(["halfway"]);
    expect(inner?.status).toEqual({ code: SpanStatusCode.ERROR, message: "it failed" });
  });

  it("rebuilds the same tree under new ids when the SDK's id generator is another", async () => {
    telemetry = installRecordingTelemetry({ idGenerator: plainIds });
    const { boundary, end } = hostBoundary();
    expect(boundary.idsKept).toBe(false);
    const relayed = (await farSide(boundary.traceparent)).take();
    replayAtBoundary(trace.getTracer("test"), boundary, relayed);
    endRelayBoundary(boundary);
    end();
    const [root] = telemetry.named("attempt 1");
    expect(telemetry.tree(root!)).toBe("attempt 1\n  worker dispatch\n    handler work\n      inner");
    expect(telemetry.named("inner")[0]?.spanContext().spanId).not.toBe(relayed.spans[0]?.spanId);
  });

  it("runs a far side's nested call under its span only when that span's id will exist on the host", () => {
    const far = `00-${TRACE_ID}-${SPAN_ID}-01`;
    telemetry = installRecordingTelemetry({ idGenerator: plainIds });
    const { boundary, end } = hostBoundary();
    expect(trace.getSpanContext(callContextAtBoundary(boundary, far))).toBe(boundary.span.spanContext());
    endRelayBoundary(boundary);
    end();
    const kept = { ...boundary, idsKept: true };
    expect(trace.getSpanContext(callContextAtBoundary(kept, far))?.spanId).toBe(SPAN_ID);
    expect(trace.getSpanContext(callContextAtBoundary(kept, undefined))).toBe(boundary.span.spanContext());
  });

  it("counts spans the far side dropped on the boundary span", async () => {
    telemetry = installRecordingTelemetry();
    const { boundary, end } = hostBoundary();
    replayAtBoundary(trace.getTracer("test"), boundary, { spans: [], dropped: 3 });
    endRelayBoundary(boundary, Object.assign(new Error("boom"), { code: "HANDLER_ERROR" }));
    end();
    const [dispatch] = telemetry.named("worker dispatch");
    expect(dispatch?.attributes).toMatchObject({
      "skillbox.telemetry.spans_dropped": 3,
      "skillbox.runtime": "worker",
      "error.type": "HANDLER_ERROR",
    });
    expect(dispatch?.status).toEqual({ code: SpanStatusCode.ERROR, message: "boom" });
  });

  it("replays no more spans than a relay keeps, however many the far side sent", () => {
    telemetry = installRecordingTelemetry();
    const { boundary, end } = hostBoundary();
    const { traceId } = boundary.span.spanContext();
    // A sandboxed handler may write its own result line: a long chain, each span the next's parent.
    const spanIdOf = (index: number) => (index + 1).toString(16).padStart(16, "0");
    const spans = Array.from({ length: DEFAULT_SPAN_RELAY_LIMITS.maxSpans + 100 }, (_, index) => ({
      name: `far ${index}`,
      kind: SpanKind.INTERNAL,
      traceId,
      spanId: spanIdOf(index),
      ...(index === 0 ? {} : { parentSpanId: spanIdOf(index - 1) }),
      startTime: [1, 0] as [number, number],
      endTime: [2, 0] as [number, number],
      attributes: {},
      events: [],
      status: { code: SpanStatusCode.UNSET },
    }));
    replayAtBoundary(trace.getTracer("test"), boundary, { spans, dropped: 1 });
    endRelayBoundary(boundary);
    end();
    const replayed = telemetry.spans().filter((span) => span.name.startsWith("far "));
    expect(replayed).toHaveLength(DEFAULT_SPAN_RELAY_LIMITS.maxSpans);
    const [dispatch] = telemetry.named("worker dispatch");
    expect(dispatch?.attributes["skillbox.telemetry.spans_dropped"]).toBe(101);
  });

  it("replays the well-formed spans of a malformed list and counts the others as dropped", () => {
    telemetry = installRecordingTelemetry();
    const { boundary, end } = hostBoundary();
    const { traceId } = boundary.span.spanContext();
    const good = {
      name: "far good",
      kind: SpanKind.INTERNAL,
      traceId,
      spanId: "00000000000000aa",
      startTime: [1, 0] as [number, number],
      endTime: [2, 0] as [number, number],
      attributes: {},
      events: [],
      status: { code: SpanStatusCode.UNSET },
    };
    // What a sandboxed handler could write on its own result line instead of a relay's spans.
    const malformed = [
      null,
      "span",
      { ...good, spanId: "not hex" },
      { ...good, events: "none" },
      { ...good, status: undefined },
      { ...good, startTime: [1] },
    ];
    const sent = { spans: [good, ...malformed], dropped: -5 } as unknown as Parameters<
      typeof replayAtBoundary
    >[2];
    expect(() => replayAtBoundary(trace.getTracer("test"), boundary, sent)).not.toThrow();
    endRelayBoundary(boundary);
    end();
    expect(
      telemetry
        .spans()
        .filter((span) => span.name.startsWith("far "))
        .map((span) => span.name),
    ).toEqual(["far good"]);
    const [dispatch] = telemetry.named("worker dispatch");
    expect(dispatch?.attributes["skillbox.telemetry.spans_dropped"]).toBe(malformed.length);
  });

  it("starts no boundary when nothing records", () => {
    expect(startRelayBoundary(trace.getTracer("test"), "worker dispatch", {})).toBeUndefined();
  });
});

describe("createSkillboxIdGenerator", () => {
  it("hands out random ids, and the hint another copy of core set on the shared global", () => {
    const ids = createSkillboxIdGenerator();
    expect(ids.generateTraceId()).toMatch(/^[0-9a-f]{32}$/);
    expect(ids.generateSpanId()).toMatch(/^[0-9a-f]{16}$/);
    expect(ids.generateSpanId()).not.toBe(ids.generateSpanId());
    const slot = (globalThis as Record<symbol, { spanId?: string }>)[
      Symbol.for("skillbox.telemetry.id-hint")
    ];
    slot!.spanId = SPAN_ID;
    expect(ids.generateSpanId()).toBe(SPAN_ID);
    expect(ids.generateSpanId()).not.toBe(SPAN_ID);
  });
});

describe("TraceContextPropagator", () => {
  const propagator = new TraceContextPropagator();
  const extract = (headers: Record<string, string>) =>
    trace.getSpanContext(propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter));

  it("extracts a traceparent and tracestate and injects them back", () => {
    const headers = { traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`, tracestate: "vendor=value,other=1" };
    const spanContext = extract(headers);
    expect(spanContext).toMatchObject({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1, isRemote: true });
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpanContext(ROOT_CONTEXT, spanContext!), carrier, defaultTextMapSetter);
    expect(carrier).toEqual(headers);
    expect(propagator.fields()).toEqual(["traceparent", "tracestate"]);
  });

  it.each([
    ["all-zero trace id", `00-${"0".repeat(32)}-${SPAN_ID}-01`],
    ["all-zero span id", `00-${TRACE_ID}-${"0".repeat(16)}-01`],
    ["uppercase hex", `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ["version ff", `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ["extra fields on version 00", `00-${TRACE_ID}-${SPAN_ID}-01-extra`],
    ["a short span id", `00-${TRACE_ID}-00f067aa0ba902-01`],
  ])("refuses a traceparent with %s", (_, traceparent) => {
    expect(parseTraceparent(traceparent)).toBeUndefined();
    expect(extract({ traceparent })).toBeUndefined();
  });

  it("accepts a later version's extra fields, and keeps the flags", () => {
    expect(parseTraceparent(`01-${TRACE_ID}-${SPAN_ID}-00-what-comes`)).toMatchObject({ traceFlags: 0 });
    expect(formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 0 })).toBe(
      `00-${TRACE_ID}-${SPAN_ID}-00`,
    );
  });
});

describe("AsyncContextManager", () => {
  it("keeps the active context across awaits and timers, and binds functions", async () => {
    const manager = new AsyncContextManager();
    const key = Symbol("key");
    const inner = ROOT_CONTEXT.setValue(key, "inside");
    const seen = await manager.with(inner, async () => {
      await sleep(1);
      const afterTimer = await new Promise((resolve) =>
        setTimeout(() => resolve(manager.active().getValue(key)), 1),
      );
      return [manager.active().getValue(key), afterTimer];
    });
    expect(seen).toEqual(["inside", "inside"]);
    expect(manager.active()).toBe(ROOT_CONTEXT);
    const bound = manager.bind(inner, () => manager.active().getValue(key));
    expect(bound()).toBe("inside");
  });
});
