import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import {
  createMcpHttpHandler,
  type McpHttpHandler,
  type McpHttpHandlerOptions,
  type McpSessionEnd,
} from "@skillbox/server";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { type ConnectedMcpClient, connectMcpClient } from "./fixtures/mcp/connect-mcp-client.js";

let host: TemporaryHost | undefined;
let handler: McpHttpHandler | undefined;
let httpServer: ServerType | undefined;
let endpoint: URL;
const clients: ConnectedMcpClient[] = [];
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

/** Connects the real SDK client as `owner`; with `stream`, its open event stream keeps the session in use. */
async function connect(owner: string, { stream }: { stream: boolean }): Promise<ConnectedMcpClient> {
  const connected = await connectMcpClient(endpoint, owner, { name: `mcp-sessions-test-${owner}`, stream });
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

  it("caps sessions in total: an owner's new session ends only that owner's idle one, else 503", async () => {
    const mcp = await start({ maxSessions: 2 });
    const idle = await connect("alice", { stream: false });
    await connect("bob", { stream: true });

    // Carol may not push Alice's idle session out: the total cap refuses her instead.
    const refused = connect("carol", { stream: true });
    await expect(refused).rejects.toMatchObject({ code: 503 });
    await expect(refused).rejects.toThrow(/limit 2/);
    expect(ended).toEqual([]);
    expect((await idle.client.listTools()).tools).toHaveLength(1);

    // Alice's own new session takes the room of her least recently used idle one.
    await connect("alice", { stream: true });
    expect(ended).toEqual([{ sessionId: idle.transport.sessionId, owner: "alice", reason: "evicted" }]);
    expect(mcp.sessionCount()).toBe(2);

    const full = connect("dave", { stream: true });
    await expect(full).rejects.toMatchObject({ code: 503 });
    expect(mcp.sessionCount()).toBe(2);
  });

  it("ends no session for a request past the cap that is not a valid initialize", async () => {
    const mcp = await start({ maxSessionsPerOwner: 1 });
    const idle = await connect("alice", { stream: false });
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-03-26",
        capabilities: {},
        clientInfo: { name: "attacker", version: "1" },
      },
    });
    const headers = {
      "x-owner": "alice",
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    const attempts: [string, RequestInit, number][] = [
      [
        "no Accept of event streams",
        { headers: { ...headers, accept: "application/json" }, body: initialize },
        406,
      ],
      ["not JSON", { headers: { ...headers, "content-type": "text/plain" }, body: initialize }, 415],
      ["malformed JSON", { headers, body: "{" }, 400],
      ["not JSON-RPC", { headers, body: JSON.stringify({ method: "initialize" }) }, 400],
      [
        "two initializes",
        { headers, body: `[${initialize},${initialize.replace('"id":1', '"id":2')}]` },
        400,
      ],
      [
        "not an initialize",
        { headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) },
        400,
      ],
    ];

    for (const [, init, status] of attempts) {
      const response = await fetch(endpoint, { method: "POST", ...init });
      await response.body?.cancel();
      expect(response.status).toBe(status);
    }

    expect(ended).toEqual([]);
    expect(mcp.sessionCount("alice")).toBe(1);
    expect((await idle.client.listTools()).tools).toHaveLength(1);
    // A valid initialize still makes its room.
    await connect("alice", { stream: false });
    expect(ended).toEqual([{ sessionId: idle.transport.sessionId, owner: "alice", reason: "evicted" }]);
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
