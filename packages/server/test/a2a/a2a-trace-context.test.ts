import { type Task, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { type RecordingTelemetry, useRecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { describe, expect, it, vi } from "vitest";
import { messageRequest, testSkill, useA2aTestServer } from "./a2a-test-server.js";

/** A span the SDK recorded. */
type ReadableSpan = ReturnType<RecordingTelemetry["spans"]>[number];

const TRACE_ID = "5c1e0b1b2f6a4c7d8e9f0a1b2c3d4e5f";
const CALLER_SPAN_ID = "a1b2c3d4e5f60718";
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`;

const startServer = useA2aTestServer();

/** The real SDK client, sending `traceparent` on every request as an instrumented caller does. */
function tracedClient(url: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("traceparent", TRACEPARENT);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  );
  return factory.createFromUrl(url);
}

describe("A2A without an OpenTelemetry SDK", () => {
  it("runs a message sent with a traceparent header", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "echo" }));
    const client = await tracedClient(running.server.url);

    const task = (await client.sendMessage(
      messageRequest([{ data: { msg: "hi" } }], { skill: "echo" }),
    )) as Task;

    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });
});

describe("A2A with an OpenTelemetry SDK", () => {
  const telemetry = useRecordingTelemetry();

  /** The one ended SERVER span of the JSON-RPC method (the HTTP request's span is `POST /a2a`). */
  function rpcSpan(): ReadableSpan {
    const spans = telemetry
      .spans()
      .filter((span) => span.kind === SpanKind.SERVER && span.attributes["rpc.system.name"] === "jsonrpc");
    expect(spans).toHaveLength(1);
    return spans[0]!;
  }

  it("makes message/send a SERVER span in the caller's trace, the parent of the execution", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "echo" }));
    const client = await tracedClient(running.server.url);
    telemetry.reset();

    const task = (await client.sendMessage(
      messageRequest([{ data: { msg: "hi" } }], { skill: "echo" }),
    )) as Task;

    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    await vi.waitFor(() => expect(telemetry.named("POST /a2a")).toHaveLength(1));
    const http = telemetry.named("POST /a2a")[0]!;
    expect(http.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    const rpc = rpcSpan();
    expect(["message/send", "SendMessage"]).toContain(rpc.name);
    expect(rpc.attributes).toMatchObject({
      "rpc.method": rpc.name,
      "jsonrpc.request.id": expect.any(String),
    });
    expect(rpc.spanContext().traceId).toBe(TRACE_ID);
    expect(telemetry.parentOf(rpc)).toBe(http);
    const [execution] = telemetry.named("execute_tool echo");
    expect(execution).toBeDefined();
    expect(telemetry.parentOf(execution!)).toBe(rpc);
    const record = await running.host.executor.getExecution(task.metadata?.executionId as string);
    expect(record?.traceId).toBe(TRACE_ID);
    expect(record?.spanId).toBe(execution!.spanContext().spanId);
  });

  it("ends a streamed method's span when its stream ends", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "echo" }));
    const client = await tracedClient(running.server.url);
    telemetry.reset();

    const events: unknown[] = [];
    for await (const event of client.sendMessageStream(
      messageRequest([{ data: { msg: "hi" } }], { skill: "echo" }),
    )) {
      events.push(event);
    }

    expect(events.length).toBeGreaterThan(0);
    await vi.waitFor(() => expect(telemetry.named("POST /a2a")).toHaveLength(1));
    const rpc = rpcSpan();
    expect(["message/stream", "SendStreamingMessage"]).toContain(rpc.name);
    expect(rpc.spanContext().traceId).toBe(TRACE_ID);
    const [execution] = telemetry.named("execute_tool echo");
    expect(telemetry.parentOf(execution!)).toBe(rpc);
  });

  it("marks an error answer with its JSON-RPC code, and names an unknown method _OTHER", async () => {
    const running = await startServer();

    const missing = await running.call("POST", "/a2a", {
      json: { jsonrpc: "2.0", id: 7, method: "tasks/get", params: { id: "no-such-task" } },
      headers: { traceparent: TRACEPARENT },
    });
    const unknown = await running.call("POST", "/a2a", {
      json: { jsonrpc: "2.0", id: 8, method: "tasks/explode", params: {} },
    });

    expect(missing.body.error.code).toBeTypeOf("number");
    const [get] = telemetry.named("tasks/get");
    expect(get?.spanContext().traceId).toBe(TRACE_ID);
    expect(get?.status.code).toBe(SpanStatusCode.ERROR);
    expect(get?.attributes).toMatchObject({
      "jsonrpc.request.id": "7",
      "error.type": String(missing.body.error.code),
      "rpc.response.status_code": String(missing.body.error.code),
    });
    expect(unknown.body.error).toBeDefined();
    const [other] = telemetry.named("_OTHER");
    expect(other?.attributes).toMatchObject({
      "rpc.method": "_OTHER",
      "rpc.method_original": "tasks/explode",
    });
  });

  it("keeps at most 256 characters of a caller's method name and request id", async () => {
    const running = await startServer();

    await running.call("POST", "/a2a", {
      json: { jsonrpc: "2.0", id: "i".repeat(100_000), method: "m".repeat(100_000), params: {} },
    });

    // A queued span holding the whole body would let callers fill the exporter's memory.
    const [other] = telemetry.named("_OTHER");
    expect(other?.attributes).toMatchObject({
      "rpc.method_original": "m".repeat(256),
      "jsonrpc.request.id": "i".repeat(256),
    });
  });
});
