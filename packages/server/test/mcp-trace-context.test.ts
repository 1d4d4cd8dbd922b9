import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { useRecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createMcpHttpHandler,
  createMcpServer,
  type McpHttpHandler,
  type McpServerHandle,
} from "../src/index.js";
import { echoSkill, type TestApi, useTestApi } from "./http-test-api.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN_ID = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`;
/** Another trace: what a client's HTTP layer would send while `_meta` names the call's own. */
const TRANSPORT_TRACEPARENT = "00-11111111111111111111111111111111-2222222222222222-01";
const EXECUTION_META_KEY = "skillbox/executionId";

const startApi = useTestApi();
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A real SDK client over Streamable HTTP to `endpoint`, sending `headers` with every request. */
async function connect(endpoint: URL, headers: Record<string, string> = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(endpoint, {
    requestInit: { headers },
    // No standalone event stream: every span of a request then ends with its response.
    fetch: (url, init) =>
      init?.method === "GET" ? Promise.resolve(new Response(null, { status: 405 })) : fetch(url, init),
  });
  const client = new Client({ name: "mcp-trace-test", version: "1.0.0" });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}

/** The HTTP API with `/mcp`, the echo skill and a `fail` skill registered. */
async function startMcpApi(): Promise<{ api: TestApi; endpoint: URL }> {
  let handler: McpHttpHandler | undefined;
  const api = await startApi({ mcp: (request, owner) => (handler as McpHttpHandler).handle(request, owner) });
  handler = createMcpHttpHandler({ registry: api.host.registry, executor: api.host.executor });
  cleanups.push(() => (handler as McpHttpHandler).close());
  api.host.executor.registerHandler("fail", () => {
    throw new Error("failed on purpose");
  });
  api.host.registry.registerMany([echoSkill(), echoSkill({ name: "fail", handler: "fail" })]);
  return { api, endpoint: new URL(`${api.server.url}/mcp`) };
}

function executionIdOf(result: { _meta?: Record<string, unknown> }): string {
  return result._meta?.[EXECUTION_META_KEY] as string;
}

describe("MCP tools/call without an OpenTelemetry SDK", () => {
  it("runs a call whose _meta carries a traceparent", async () => {
    const { endpoint } = await startMcpApi();
    const client = await connect(endpoint, { traceparent: TRANSPORT_TRACEPARENT });

    const result = await client.callTool({
      name: "echo",
      arguments: { msg: "hi" },
      _meta: { traceparent: TRACEPARENT, tracestate: "rojo=00f067aa0ba902b7" },
    });

    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ echoed: "hi" });
  });
});

describe("MCP tools/call with an OpenTelemetry SDK", () => {
  const telemetry = useRecordingTelemetry();

  it("makes the call a SERVER span under the _meta trace context, linked to the HTTP request's span", async () => {
    const { api, endpoint } = await startMcpApi();
    const client = await connect(endpoint, { traceparent: TRANSPORT_TRACEPARENT });
    telemetry.reset();

    const result = await client.callTool({
      name: "echo",
      arguments: { msg: "hi" },
      _meta: { traceparent: TRACEPARENT, tracestate: "rojo=00f067aa0ba902b7" },
    });

    expect(result.structuredContent).toEqual({ echoed: "hi" });
    const call = telemetry.only("tools/call echo");
    expect(call.kind).toBe(SpanKind.SERVER);
    expect(call.spanContext().traceId).toBe(TRACE_ID);
    expect(call.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    expect(call.spanContext().traceState?.get("rojo")).toBe("00f067aa0ba902b7");
    expect(call.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "echo",
      "gen_ai.operation.name": "execute_tool",
      "mcp.session.id": expect.any(String),
      "jsonrpc.request.id": expect.any(String),
      "network.transport": "tcp",
      "mcp.protocol.version": expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
    });
    expect(call.status.code).toBe(SpanStatusCode.UNSET);
    await vi.waitFor(() => expect(telemetry.named("POST /mcp")).toHaveLength(1));
    const http = telemetry.only("POST /mcp");
    expect(http.spanContext().traceId).toBe("11111111111111111111111111111111");
    expect(call.links.map((link) => link.context.spanId)).toEqual([http.spanContext().spanId]);
    const execution = telemetry.only("execute_tool echo");
    expect(telemetry.parentOf(execution)).toBe(call);
    const record = await api.host.executor.getExecution(executionIdOf(result));
    expect(record?.traceId).toBe(TRACE_ID);
    expect(record?.spanId).toBe(execution.spanContext().spanId);
  });

  it("falls back to the HTTP request's traceparent when _meta carries none", async () => {
    const { api, endpoint } = await startMcpApi();
    const client = await connect(endpoint, { traceparent: TRACEPARENT });
    telemetry.reset();

    const result = await client.callTool({ name: "echo", arguments: { msg: "hi" } });

    const call = telemetry.only("tools/call echo");
    await vi.waitFor(() => expect(telemetry.named("POST /mcp")).toHaveLength(1));
    const http = telemetry.only("POST /mcp");
    expect(http.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    expect(telemetry.parentOf(call)).toBe(http);
    expect(call.links).toEqual([]);
    expect((await api.host.executor.getExecution(executionIdOf(result)))?.traceId).toBe(TRACE_ID);
  });

  it("reads the HTTP headers itself when served outside the HTTP API", async () => {
    const { api } = await startMcpApi();
    const handler = createMcpHttpHandler({ registry: api.host.registry, executor: api.host.executor });
    cleanups.push(() => handler.close());
    const app = new Hono();
    app.all("/mcp", (context) => handler.handle(context.req.raw, "public"));
    let server!: ServerType;
    const { port } = await new Promise<AddressInfo>((resolve) => {
      server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, resolve);
    });
    cleanups.push(
      () =>
        new Promise((resolve) => {
          server.close(resolve);
          if ("closeAllConnections" in server) server.closeAllConnections();
        }),
    );
    const client = await connect(new URL(`http://127.0.0.1:${port}/mcp`), { traceparent: TRACEPARENT });

    await client.callTool({ name: "echo", arguments: { msg: "hi" } });

    const call = telemetry.only("tools/call echo");
    expect(call.spanContext().traceId).toBe(TRACE_ID);
    expect(call.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    expect(telemetry.parentOf(telemetry.only("execute_tool echo"))).toBe(call);
  });

  it("marks a failed tool result tool_error, and an unknown tool with its JSON-RPC code", async () => {
    const { endpoint } = await startMcpApi();
    const client = await connect(endpoint);

    const failed = await client.callTool({ name: "fail", arguments: { msg: "x" } });
    await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toThrow(/Unknown tool/);

    expect(failed.isError).toBe(true);
    const call = telemetry.only("tools/call fail");
    expect(call.status.code).toBe(SpanStatusCode.ERROR);
    expect(call.attributes["error.type"]).toBe("tool_error");
    const unknown = telemetry.only("tools/call");
    expect(unknown.status.code).toBe(SpanStatusCode.ERROR);
    expect(unknown.attributes).toMatchObject({
      "gen_ai.tool.name": "no_such_tool",
      "error.type": "-32602",
      "rpc.response.status_code": "-32602",
    });
  });

  it("keeps at most 256 characters of a tool name the client made up", async () => {
    const { endpoint } = await startMcpApi();
    const client = await connect(endpoint);
    const name = "x".repeat(100_000);

    await expect(client.callTool({ name, arguments: {} })).rejects.toThrow(/Unknown tool/);

    // A queued span holding the whole body would let callers fill the exporter's memory.
    expect(telemetry.only("tools/call").attributes["gen_ai.tool.name"]).toBe("x".repeat(256));
  });

  it("takes the _meta trace context on a transport without HTTP", async () => {
    const { api } = await startMcpApi();
    const handle: McpServerHandle = createMcpServer({
      registry: api.host.registry,
      executor: api.host.executor,
    });
    cleanups.push(() => handle.close());
    const client = new Client({ name: "mcp-trace-test", version: "1.0.0" });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await handle.server.connect(serverTransport);
    await client.connect(clientTransport);
    cleanups.push(() => client.close());

    const result = await client.callTool({
      name: "echo",
      arguments: { msg: "hi" },
      _meta: { traceparent: TRACEPARENT },
    });

    const call = telemetry.only("tools/call echo");
    expect(call.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    expect(call.attributes["network.transport"]).toBeUndefined();
    expect(call.attributes["mcp.session.id"]).toBeUndefined();
    expect((await api.host.executor.getExecution(executionIdOf(result)))?.traceId).toBe(TRACE_ID);
  });
});
