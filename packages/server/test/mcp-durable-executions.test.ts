import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import type { SkillContext, SkillRegistration } from "@skillbox/core";
import { createMcpHttpHandler, createMcpServer, type McpServerHandle } from "@skillbox/server";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { Hono } from "hono";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connectMcpClient } from "./fixtures/mcp/connect-mcp-client.js";

const STEPS_INPUT = { type: "object", properties: { steps: { type: "number" } }, required: ["steps"] };

function skill(overrides: Partial<SkillRegistration> & Pick<SkillRegistration, "name">): SkillRegistration {
  return {
    version: "1.0.0",
    handler: overrides.name,
    input: { type: "object" },
    apiKeyId: "public",
    ...overrides,
  };
}

/** The progress a client received, and a way to wait for one of them. */
class ReceivedProgress {
  readonly values: Progress[] = [];
  private readonly waiters: { progress: number; resolve: () => void }[] = [];

  add = (progress: Progress): void => {
    this.values.push(progress);
    for (const waiter of this.waiters.filter((entry) => entry.progress <= progress.progress)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };

  /** Resolves once a notification with at least `progress` has arrived. */
  reached(progress: number): Promise<void> {
    if (this.values.some((value) => value.progress >= progress)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ progress, resolve }));
  }
}

function waitForAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

let host: TemporaryHost;
let received: ReceivedProgress;
let mcp: McpServerHandle | undefined;
let client: Client | undefined;

beforeEach(() => {
  host = createTemporaryHost();
  received = new ReceivedProgress();
  // Reports each step only once the client has seen the one before: nothing is merged or raced.
  host.executor.registerHandler("steps", async (input: { steps: number }, context: SkillContext) => {
    for (let step = 1; step <= input.steps; step++) {
      context.progress({ progress: step, total: input.steps, message: `step ${step} of ${input.steps}` });
      await received.reached(step);
    }
    return { done: input.steps };
  });
  host.executor.registerHandler("hold", async (_input: unknown, context: SkillContext) => {
    context.progress({ progress: 1, message: "holding" });
    return waitForAbort(context.signal);
  });
  host.executor.registerHandler("reporter", (_input: unknown, context: SkillContext) => {
    context.progress({ progress: 1, total: 1, message: "nobody listens" });
    return "reported";
  });
  host.executor.registerHandler("guarded", () => ({ deleted: true }));
  host.registry.registerMany([
    skill({ name: "steps", input: STEPS_INPUT }),
    skill({ name: "hold" }),
    skill({ name: "reporter" }),
    skill({ name: "guarded", approval: "required" }),
    skill({
      name: "guarded-typed",
      handler: "guarded",
      approval: "required",
      output: { type: "object", properties: { deleted: { type: "boolean" } }, required: ["deleted"] },
    }),
  ]);
});

afterEach(async () => {
  await client?.close();
  await mcp?.close();
  client = undefined;
  mcp = undefined;
  await host.dispose();
});

async function connect(): Promise<Client> {
  mcp = createMcpServer({ registry: host.registry, executor: host.executor });
  client = new Client({ name: "mcp-durable-test", version: "1.0.0" });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await mcp.server.connect(serverTransport);
  await client.connect(clientTransport);
  return client;
}

function textOf(result: unknown): string {
  return ((result as { content?: { text: string }[] }).content ?? [])[0]?.text ?? "";
}

describe("createMcpServer: progress", () => {
  it("sends each ctx.progress() report as notifications/progress when the client sent a progress token", async () => {
    const connected = await connect();

    const result = await connected.callTool({ name: "steps", arguments: { steps: 3 } }, undefined, {
      onprogress: received.add,
    });

    expect(result.isError).toBeFalsy();
    expect(JSON.parse(textOf(result))).toEqual({ done: 3 });
    const executionId = String(result._meta?.["skillbox/executionId"]);
    const meta = { "skillbox/executionId": executionId };
    expect(received.values).toEqual([
      { progress: 1, total: 3, message: "step 1 of 3", _meta: meta },
      { progress: 2, total: 3, message: "step 2 of 3", _meta: meta },
      { progress: 3, total: 3, message: "step 3 of 3", _meta: meta },
    ]);
    const execution = await host.executor.getExecution(executionId);
    expect(execution).toMatchObject({ status: "success", skillName: "steps", apiKeyId: "public" });
    expect(execution?.progress).toMatchObject({ progress: 3, total: 3, message: "step 3 of 3" });
  });

  it("routes progress to the call's own stream over Streamable HTTP", async () => {
    const handler = createMcpHttpHandler({ registry: host.registry, executor: host.executor });
    const app = new Hono();
    app.all("/mcp", (context) => handler.handle(context.req.raw, "public"));
    let httpServer!: ServerType;
    const { port } = await new Promise<AddressInfo>((resolve) => {
      httpServer = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, resolve);
    });
    try {
      const http = await connectMcpClient(new URL(`http://127.0.0.1:${port}/mcp`), "public", {
        name: "mcp-durable-http-test",
        stream: false,
      });
      const result = await http.client.callTool({ name: "steps", arguments: { steps: 2 } }, undefined, {
        onprogress: received.add,
      });
      await http.client.close();

      expect(JSON.parse(textOf(result))).toEqual({ done: 2 });
      expect(received.values.map((value) => value.progress)).toEqual([1, 2]);
    } finally {
      await handler.close();
      await new Promise((resolve) => {
        httpServer.close(resolve);
        if ("closeAllConnections" in httpServer) httpServer.closeAllConnections();
      });
    }
  });

  it("sends no notification without a progress token, and still records the progress", async () => {
    const connected = await connect();
    const errors: Error[] = [];
    connected.onerror = (error) => errors.push(error);

    const result = await connected.callTool({ name: "reporter", arguments: {} });

    expect(textOf(result)).toBe('"reported"');
    expect(errors).toEqual([]);
    const execution = await host.executor.getExecution(String(result._meta?.["skillbox/executionId"]));
    expect(execution?.progress).toMatchObject({ progress: 1, total: 1, message: "nobody listens" });
  });

  it("records arguments nested too deep as INPUT_INVALID on the progress path too, never run", async () => {
    const connected = await connect();
    let nested = "1";
    for (let level = 0; level < 150; level++) nested = `{"a":${nested}}`;

    const result = await connected.callTool({ name: "hold", arguments: JSON.parse(nested) }, undefined, {
      onprogress: received.add,
    });

    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^INPUT_INVALID: /);
    expect(received.values).toEqual([]);
    expect((await host.executor.listExecutions({})).map((execution) => execution.error?.code)).toEqual([
      "INPUT_INVALID",
    ]);
  });

  it("cancels the execution when the client cancels the call (notifications/cancelled)", async () => {
    const connected = await connect();
    const controller = new AbortController();

    const call = connected.callTool({ name: "hold", arguments: {} }, undefined, {
      signal: controller.signal,
      onprogress: () => controller.abort(new Error("the user stopped it")),
    });

    await expect(call).rejects.toThrow("the user stopped it");
    const [started] = await host.executor.listExecutions({ skill: "hold" });
    expect(started).toBeDefined();
    const execution = await host.executor.wait(started!.id);
    expect(execution.status).toBe("cancelled");
  });
});

describe("createMcpServer: approvals", () => {
  it("answers a skill awaiting approval with a result that says so and names the execution, not an error", async () => {
    const connected = await connect();

    const result = await connected.callTool({ name: "guarded", arguments: {} });

    expect(result.isError).toBeFalsy();
    const executionId = String(result._meta?.["skillbox/executionId"]);
    expect(result._meta?.["skillbox/status"]).toBe("awaiting_approval");
    expect(result.structuredContent).toMatchObject({ status: "awaiting_approval", executionId });
    expect(textOf(result)).toMatch(/needs a person's approval/);
    expect(textOf(result)).toContain(executionId);
    expect(textOf(result)).toMatch(/Do not call the tool again/);
    expect((await host.executor.getExecution(executionId))?.status).toBe("awaiting_approval");

    // Only a person approves, outside MCP; then it runs.
    await host.executor.approve(executionId, { by: "operator" });
    const finished = await host.executor.wait(executionId);
    expect(finished).toMatchObject({ status: "success", output: { deleted: true } });
  });

  it("offers the model no tool that approves, and marks the tools that need approval", async () => {
    const connected = await connect();

    const { tools } = await connected.listTools();

    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "guarded",
      "guarded-typed",
      "hold",
      "reporter",
      "steps",
    ]);
    expect(tools.find((tool) => tool.name === "guarded")?._meta).toMatchObject({
      "skillbox/approval": "required",
    });
    expect(tools.find((tool) => tool.name === "steps")?._meta?.["skillbox/approval"]).toBeUndefined();
  });

  it("answers a tool with an output schema awaiting approval as isError, so clients accept the result", async () => {
    const connected = await connect();
    await connected.listTools();

    const result = await connected.callTool({ name: "guarded-typed", arguments: {} });

    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(result._meta).toMatchObject({ "skillbox/status": "awaiting_approval" });
    expect(textOf(result)).toMatch(/needs a person's approval/);
  });

  it("answers awaiting approval on the progress path too, without waiting for the decision", async () => {
    const connected = await connect();

    const result = await connected.callTool({ name: "guarded", arguments: {} }, undefined, {
      onprogress: received.add,
    });

    expect(result.structuredContent).toMatchObject({ status: "awaiting_approval" });
    const execution = await host.executor.getExecution(String(result._meta?.["skillbox/executionId"]));
    expect(execution?.status).toBe("awaiting_approval");
    await host.executor.reject(execution!.id, { by: "operator", reason: "not now" });
    expect((await host.executor.wait(execution!.id)).status).toBe("rejected");
  });
});
