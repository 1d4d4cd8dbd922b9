import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { ErrorCode, LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import type { SkillRegistration } from "@skillbox/core";
import { createMcpHttpHandler, type McpHttpHandler } from "@skillbox/server";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { Hono } from "hono";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ConnectedMcpClient, connectMcpClient } from "./fixtures/mcp/connect-mcp-client.js";
import { type ToolListChanges, watchToolListChanges } from "./fixtures/mcp/tool-list-changes.js";

const MESSAGE_INPUT = { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] };

function skill(overrides: Partial<SkillRegistration> & Pick<SkillRegistration, "name">): SkillRegistration {
  return {
    version: "1.0.0",
    handler: "echo",
    input: MESSAGE_INPUT,
    output: { type: "object", properties: { echoed: { type: "string" } } },
    apiKeyId: "public",
    ...overrides,
  };
}

interface ConnectedClient extends ConnectedMcpClient {
  changes: ToolListChanges;
}

let host: TemporaryHost;
let handler: McpHttpHandler;
let httpServer: ServerType;
let endpoint: URL;
const clients: ConnectedClient[] = [];

/** Connects as `owner` with the session's event stream open, watching its tool-list changes. */
async function connectAs(owner: string): Promise<ConnectedClient> {
  let changes!: ToolListChanges;
  const connected = await connectMcpClient(endpoint, owner, {
    name: `mcp-http-test-${owner}`,
    stream: true,
    prepare: (client) => {
      changes = watchToolListChanges(client);
    },
  });
  const watched = { ...connected, changes };
  clients.push(watched);
  return watched;
}

function toolNames(tools: { name: string }[]): string[] {
  return tools.map((tool) => tool.name).sort();
}

beforeEach(async () => {
  host = createTemporaryHost();
  host.executor.registerHandler("echo", (input: { msg: string }) => ({ echoed: input.msg }));
  host.registry.registerMany([skill({ name: "echo" }), skill({ name: "@acme/private", apiKeyId: "alice" })]);
  handler = createMcpHttpHandler({ registry: host.registry, executor: host.executor });
  const app = new Hono();
  app.all("/mcp", (context) => handler.handle(context.req.raw, context.req.header("x-owner") ?? "public"));
  const { port } = await new Promise<AddressInfo>((resolve) => {
    httpServer = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, resolve);
  });
  endpoint = new URL(`http://127.0.0.1:${port}/mcp`);
});

afterEach(async () => {
  for (const { client } of clients.splice(0)) await client.close();
  await handler.close();
  await new Promise((resolve) => {
    httpServer.close(resolve);
    if ("closeAllConnections" in httpServer) httpServer.closeAllConnections();
  });
  await host.dispose();
});

describe("createMcpHttpHandler", () => {
  it("serves each owner the tools it may see, and runs them as that owner", async () => {
    const alice = await connectAs("alice");
    const bob = await connectAs("bob");
    expect(toolNames((await alice.client.listTools()).tools)).toEqual(["acme__private", "echo"]);
    expect(toolNames((await bob.client.listTools()).tools)).toEqual(["echo"]);

    const result = await alice.client.callTool({ name: "acme__private", arguments: { msg: "hi" } });
    expect(result.structuredContent).toEqual({ echoed: "hi" });
    const execution = await host.executor.getExecution(String(result._meta?.["skillbox/executionId"]));
    expect(execution).toMatchObject({
      skillName: "@acme/private",
      apiKeyId: "alice",
      sessionId: alice.transport.sessionId,
    });

    await expect(
      bob.client.callTool({ name: "acme__private", arguments: { msg: "hi" } }),
    ).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  });

  it("keeps a session to the owner that started it", async () => {
    const alice = await connectAs("alice");
    const sessionId = alice.transport.sessionId!;
    const asBob = await fetch(endpoint, {
      method: "POST",
      headers: {
        "x-owner": "bob",
        "mcp-session-id": sessionId,
        "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(asBob.status).toBe(404);
    expect(await asBob.json()).toMatchObject({ error: { code: -32001, message: "Session not found" } });
    // Alice's session is untouched.
    expect(toolNames((await alice.client.listTools()).tools)).toContain("acme__private");
  });

  it("refuses requests that start no session", async () => {
    const listWithoutSession = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(listWithoutSession.status).toBe(400);
    expect((await fetch(endpoint, { method: "GET" })).status).toBe(400);
    expect((await fetch(endpoint, { method: "PUT" })).status).toBe(405);
  });

  it("notifies the sessions whose tool list changed", async () => {
    const alice = await connectAs("alice");
    const bob = await connectAs("bob");
    const aliceBefore = alice.changes.count;
    const bobBefore = bob.changes.count;

    host.registry.register(skill({ name: "alice-tool", apiKeyId: "alice" }));
    await alice.changes.next(aliceBefore);
    expect(toolNames((await alice.client.listTools()).tools)).toContain("alice-tool");

    // Bob's first notification must be this one: the alice-only registration sent him none.
    host.registry.register(skill({ name: "for-everyone" }));
    await bob.changes.next(bobBefore);
    expect(bob.changes.count).toBe(bobBefore + 1);
    expect(toolNames((await bob.client.listTools()).tools)).toEqual(["echo", "for-everyone"]);
    await alice.changes.next(aliceBefore + 1);
  });

  it("ends a session on DELETE", async () => {
    const alice = await connectAs("alice");
    const sessionId = alice.transport.sessionId!;
    await alice.transport.terminateSession();
    const afterDelete = await fetch(endpoint, {
      method: "POST",
      headers: {
        "x-owner": "alice",
        "mcp-session-id": sessionId,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(afterDelete.status).toBe(404);
  });

  it("closes every session on close()", async () => {
    const listeners = host.registry.listenerCount("change");
    await connectAs("alice");
    await connectAs("bob");
    await handler.close();
    expect(host.registry.listenerCount("change")).toBe(listeners - 1);
    const afterClose = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "late", version: "1" },
        },
      }),
    });
    expect(afterClose.status).toBe(503);
  });
});
