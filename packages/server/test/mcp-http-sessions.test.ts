import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  createMcpHttpHandler,
  type McpHttpHandler,
  type McpHttpHandlerOptions,
  type McpSessionEnd,
} from "@skillbox/server";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { createTemporaryHost, type TemporaryHost } from "../../../test/helpers/temporary-host.js";

interface ConnectedClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

let host: TemporaryHost | undefined;
let handler: McpHttpHandler | undefined;
let httpServer: ServerType | undefined;
let endpoint: URL;
const clients: ConnectedClient[] = [];
let ended: McpSessionEnd[] = [];
let endListeners: (() => void)[] = [];

/** Starts the handler with `options` on a loopback server; the owner is the `x-owner` header. */
async function start(options: Omit<McpHttpHandlerOptions, "registry" | "executor">): Promise<McpHttpHandler> {
  host = createTemporaryHost();
  host.executor.registerHandler("echo", (input: unknown) => input);
  host.registry.register({ name: "echo", version: "1.0.0", handler: "echo" });
  const started = createMcpHttpHandler({
    registry: host.registry,
    executor: host.executor,
    ...options,
    onSessionEnd: (end) => {
      ended.push(end);
      for (const listener of endListeners.splice(0)) listener();
    },
  });
  handler = started;
  const app = new Hono();
  app.all("/mcp", (context) => started.handle(context.req.raw, context.req.header("x-owner") ?? "public"));
  const { port } = await new Promise<AddressInfo>((resolve) => {
    httpServer = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, resolve);
  });
  endpoint = new URL(`http://127.0.0.1:${port}/mcp`);
  return started;
}

/** Resolves once a session ended for `reason` (checked after every end event). */
function nextEnd(reason: McpSessionEnd["reason"]): Promise<McpSessionEnd> {
  return new Promise((resolve) => {
    const check = () => {
      const found = ended.find((end) => end.reason === reason);
      if (found === undefined) endListeners.push(check);
      else resolve(found);
    };
    check();
  });
}

/**
 * Connects with the real SDK client as `owner`. With `stream`, waits until the session's event
 * stream (GET) is open, which keeps the session in use; without, the client is told GET is not
 * offered (405, as the spec allows), so between requests its session is idle.
 */
async function connect(owner: string, { stream }: { stream: boolean }): Promise<ConnectedClient> {
  let markStreamOpen!: () => void;
  const streamOpen = new Promise<void>((resolve) => {
    markStreamOpen = resolve;
  });
  const transport = new StreamableHTTPClientTransport(endpoint, {
    requestInit: { headers: { "x-owner": owner } },
    fetch: async (url, init) => {
      if (init?.method === "GET" && !stream) return new Response(null, { status: 405 });
      const response = await fetch(url, init);
      if (init?.method === "GET" && response.ok) markStreamOpen();
      return response;
    },
  });
  const client = new Client({ name: `mcp-sessions-test-${owner}`, version: "1.0.0" });
  await client.connect(transport);
  if (stream) await streamOpen;
  const connected = { client, transport };
  clients.push(connected);
  return connected;
}

afterEach(async () => {
  for (const { client } of clients.splice(0)) await client.close().catch(() => {});
  await handler?.close();
  await new Promise((resolve) => {
    if (httpServer === undefined) return resolve(undefined);
    httpServer.close(resolve);
    if ("closeAllConnections" in httpServer) httpServer.closeAllConnections();
  });
  await host?.dispose();
  host = undefined;
  handler = undefined;
  httpServer = undefined;
  ended = [];
  endListeners = [];
});

describe("createMcpHttpHandler: session bounds", () => {
  it("refuses a session over the owner's cap with 429 while every session is in use", async () => {
    const mcp = await start({ maxSessionsPerOwner: 3 });
    for (let index = 0; index < 3; index++) await connect("alice", { stream: true });

    const refused = connect("alice", { stream: true });

    await expect(refused).rejects.toMatchObject({ code: 429 });
    await expect(refused).rejects.toThrow(/sessions for owner .*alice.*limit 3.*idle.*DELETE/);
    expect(mcp.sessionCount("alice")).toBe(3);
    // The cap is per owner.
    await connect("bob", { stream: true });
    expect(mcp.sessionCount("bob")).toBe(1);
    expect(mcp.sessionCount()).toBe(4);
  });

  it("makes room by ending the owner's least recently used idle session", async () => {
    const mcp = await start({ maxSessionsPerOwner: 3 });
    const oldest = await connect("alice", { stream: false });
    const middle = await connect("alice", { stream: false });
    await connect("alice", { stream: true });
    await oldest.client.listTools(); // now `middle` is the least recently used

    const fourth = await connect("alice", { stream: false });

    expect(mcp.sessionCount("alice")).toBe(3);
    expect(ended).toEqual([{ sessionId: middle.transport.sessionId, owner: "alice", reason: "evicted" }]);
    await expect(middle.client.listTools()).rejects.toMatchObject({ code: 404 });
    expect((await oldest.client.listTools()).tools).toHaveLength(1);
    expect((await fourth.client.listTools()).tools).toHaveLength(1);
  });

  it("caps sessions in total: 503 when none is idle, else the least recently used idle one ends", async () => {
    const mcp = await start({ maxSessions: 2 });
    const idle = await connect("alice", { stream: false });
    await connect("bob", { stream: true });

    await connect("carol", { stream: true });
    expect(ended).toEqual([{ sessionId: idle.transport.sessionId, owner: "alice", reason: "evicted" }]);
    expect(mcp.sessionCount()).toBe(2);

    const refused = connect("dave", { stream: true });
    await expect(refused).rejects.toMatchObject({ code: 503 });
    await expect(refused).rejects.toThrow(/limit 2/);
    expect(mcp.sessionCount()).toBe(2);
  });

  it("ends a session idle for idleTimeoutMs; a request naming it then gets 404", async () => {
    const mcp = await start({ sessionIdleTimeoutMs: 1000 });
    const busy = await connect("alice", { stream: true });
    const idle = await connect("alice", { stream: false });

    const expired = await nextEnd("expired");

    expect(expired).toEqual({ sessionId: idle.transport.sessionId, owner: "alice", reason: "expired" });
    // The session with an open event stream is in use, though it started earlier.
    expect(mcp.sessionCount("alice")).toBe(1);
    expect((await busy.client.listTools()).tools).toHaveLength(1);
    await expect(idle.client.listTools()).rejects.toMatchObject({ code: 404 });
  });

  it("counts no session after close()", async () => {
    const mcp = await start({ sessionIdleTimeoutMs: 60_000 });
    await connect("alice", { stream: true });
    await connect("alice", { stream: false });
    await connect("bob", { stream: false });
    expect(mcp.sessionCount()).toBe(3);

    await mcp.close();

    expect(mcp.sessionCount()).toBe(0);
    expect(ended.map((end) => end.reason)).toEqual(["closed", "closed", "closed"]);
  });

  it("refuses bad limits naming the option", () => {
    const options = { registry: {} as never, executor: {} as never };
    for (const [bad, name] of [
      [{ maxSessionsPerOwner: 0 }, "maxSessionsPerOwner"],
      [{ maxSessions: 1.5 }, "maxSessions"],
      [{ sessionIdleTimeoutMs: -1 }, "sessionIdleTimeoutMs"],
    ] as const) {
      expect(() => createMcpHttpHandler({ ...options, ...bad })).toThrow(
        expect.objectContaining({
          code: "SERVER_CONFIG_INVALID",
          message: expect.stringContaining(`\`${name}\``),
        }),
      );
    }
  });
});
