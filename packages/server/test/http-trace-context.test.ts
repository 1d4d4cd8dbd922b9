import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { useRecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { describe, expect, it, vi } from "vitest";
import { echoSkill, useTestApi } from "./http-test-api.js";

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN_ID = "b7ad6b7169203331";
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`;

const startApi = useTestApi();

describe("createHttpApp without an OpenTelemetry SDK", () => {
  it("serves a request that carries a traceparent as any other", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());

    const response = await api.call("POST", "/api/skills/echo/execute", {
      json: { input: { msg: "hi" } },
      headers: { traceparent: TRACEPARENT, tracestate: "vendor=value" },
    });

    expect(response.status).toBe(200);
    expect(response.body.output).toEqual({ echoed: "hi" });
    expect(response.headers.get("traceparent")).toBeNull();
  });
});

describe("createHttpApp with an OpenTelemetry SDK", () => {
  const telemetry = useRecordingTelemetry();

  it("makes the request a SERVER span in the caller's trace, the parent of the execution", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());

    const response = await api.call("POST", "/api/skills/echo/execute", {
      json: { input: { msg: "hi" } },
      headers: { traceparent: TRACEPARENT, tracestate: "vendor=value" },
    });

    expect(response.status).toBe(200);
    const server = telemetry.only("POST /api/skills/:name/execute");
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(server.spanContext().traceId).toBe(TRACE_ID);
    expect(server.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    expect(server.parentSpanContext?.isRemote).toBe(true);
    expect(server.spanContext().traceState?.get("vendor")).toBe("value");
    expect(server.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/api/skills/:name/execute",
      "url.path": "/api/skills/echo/execute",
      "url.scheme": "http",
      "http.response.status_code": 200,
    });
    expect(server.status.code).toBe(SpanStatusCode.UNSET);
    const execution = telemetry.only("execute_tool echo");
    expect(telemetry.parentOf(execution)).toBe(server);
    expect(execution.spanContext().traceId).toBe(TRACE_ID);
    const record = await api.host.executor.getExecution(response.body.id);
    expect(record?.traceId).toBe(TRACE_ID);
    expect(record?.spanId).toBe(execution.spanContext().spanId);
  });

  it("keeps the trace of a queued execution (Prefer: respond-async)", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());

    const response = await api.call("POST", "/api/skills/echo/execute", {
      json: { input: { msg: "later" } },
      headers: { traceparent: TRACEPARENT, prefer: "respond-async, wait=10" },
    });

    expect(response.body.status).toBe("success");
    const server = telemetry.only("POST /api/skills/:name/execute");
    const execution = telemetry.only("execute_tool echo");
    expect(telemetry.parentOf(execution)).toBe(server);
    expect((await api.host.executor.getExecution(response.body.id))?.traceId).toBe(TRACE_ID);
  });

  it("starts a new trace for a request without a traceparent", async () => {
    const api = await startApi();

    await api.call("GET", "/health");

    const server = telemetry.only("GET /health");
    expect(server.parentSpanContext).toBeUndefined();
    expect(server.spanContext().traceId).not.toBe(TRACE_ID);
  });

  it("names the span by the method alone when no route matched, by the middleware route when one refused", async () => {
    const api = await startApi({ apiKeys: { "key-1": "alice" } });

    expect((await api.call("GET", "/nowhere")).status).toBe(404);
    expect((await api.call("GET", "/api/skills")).status).toBe(401);

    const notFound = telemetry.only("GET");
    expect(notFound.attributes["http.route"]).toBeUndefined();
    expect(notFound.attributes["http.response.status_code"]).toBe(404);
    const refused = telemetry.only("GET /api/*");
    expect(refused.attributes["http.response.status_code"]).toBe(401);
    expect(refused.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("ends with status ERROR on a 5xx answer", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());
    await api.host.executor.close();

    const response = await api.call("POST", "/api/skills/echo/execute", { json: { input: { msg: "x" } } });

    expect(response.status).toBe(503);
    const server = telemetry.only("POST /api/skills/:name/execute");
    expect(server.status.code).toBe(SpanStatusCode.ERROR);
    expect(server.attributes).toMatchObject({ "http.response.status_code": 503, "error.type": "503" });
  });

  it("ends an event stream's span when the stream ends", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());
    const executed = await api.call("POST", "/api/skills/echo/execute", { json: { input: { msg: "x" } } });

    const response = await fetch(`${api.server.url}/api/executions/${executed.body.id}/events`, {
      headers: { traceparent: TRACEPARENT },
    });
    const text = await response.text();

    expect(text).toContain("event: finished");
    await vi.waitFor(() => expect(telemetry.named("GET /api/executions/:id/events")).toHaveLength(1));
    const stream = telemetry.only("GET /api/executions/:id/events");
    expect(stream.spanContext().traceId).toBe(TRACE_ID);
    expect(stream.attributes["http.response.status_code"]).toBe(200);
  });

  it("ends an event stream's span when the client leaves", async () => {
    const api = await startApi();
    api.host.executor.registerHandler("wait", (_input: unknown, context: { signal: AbortSignal }) => {
      return new Promise((_resolve, reject) => {
        context.signal.addEventListener("abort", () => reject(context.signal.reason), { once: true });
      });
    });
    api.host.registry.register(echoSkill({ name: "wait", handler: "wait" }));
    const submitted = await api.call("POST", "/api/skills/wait/execute", {
      json: { input: { msg: "x" } },
      headers: { prefer: "respond-async" },
    });
    const controller = new AbortController();

    const response = await fetch(`${api.server.url}/api/executions/${submitted.body.id}/events`, {
      headers: { traceparent: TRACEPARENT },
      signal: controller.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain("event: status");
    expect(telemetry.named("GET /api/executions/:id/events")).toHaveLength(0);
    controller.abort();
    await vi.waitFor(() => expect(telemetry.named("GET /api/executions/:id/events")).toHaveLength(1));
    expect(telemetry.only("GET /api/executions/:id/events").spanContext().traceId).toBe(TRACE_ID);
    await api.call("POST", `/api/executions/${submitted.body.id}/cancel`, { json: {} });
  });
});
