import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  createSkillHost,
  createToolNameMap,
  SkillboxError,
  type SkillRegistration,
  TOOL_NAME_PATTERN,
} from "@skillbox/core";
import { createMcpServer, type McpServerHandle } from "@skillbox/server";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ToolListChanges, watchToolListChanges } from "./fixtures/mcp/tool-list-changes.js";

const MESSAGE_INPUT = { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] };

function skill(overrides: Partial<SkillRegistration> & Pick<SkillRegistration, "name">): SkillRegistration {
  return { version: "1.0.0", handler: "echo", input: MESSAGE_INPUT, apiKeyId: "system", ...overrides };
}

let host: TemporaryHost;
let mcp: McpServerHandle;
let client: Client;
let changes: ToolListChanges;

async function connect(owner?: string): Promise<void> {
  mcp = createMcpServer({ registry: host.registry, executor: host.executor, owner });
  client = new Client({ name: "mcp-server-test", version: "1.0.0" });
  changes = watchToolListChanges(client);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await mcp.server.connect(serverTransport);
  await client.connect(clientTransport);
}

beforeEach(() => {
  host = createTemporaryHost();
  host.executor.registerHandler("echo", (input: { msg: string }) => ({ echoed: input.msg }));
  host.executor.registerHandler("shout", (input: string) => input.toUpperCase());
  host.executor.registerHandler("issues", () => []);
  host.executor.registerHandler("weather", (input: { city: string }) => ({
    city: input.city,
    forecast: "sun",
  }));
  host.executor.registerHandler("limited", () => {
    throw new SkillboxError("RATE_LIMITED", "slow down", { retryable: false });
  });
  host.registry.registerMany([
    skill({
      name: "echo",
      description: "Returns the message",
      output: { type: "object", properties: { echoed: { type: "string" } }, required: ["echoed"] },
      apiKeyId: "public",
    }),
    skill({ name: "echo", version: "2.0.0-rc.1", description: "Next echo" }),
    skill({
      name: "@acme/weather",
      handler: "weather",
      input: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      output: { type: "object", properties: { city: { type: "string" }, forecast: { type: "string" } } },
    }),
    skill({ name: "github.issues", handler: "issues", input: {}, output: { type: "array" } }),
    skill({ name: "shout", handler: "shout", input: { type: "string", minLength: 1 } }),
    skill({ name: "limited", handler: "limited" }),
    skill({ name: "beta-only", version: "2.0.0-beta.1" }),
    skill({ name: "switched-off", enabled: false }),
    skill({ name: "alice-only", apiKeyId: "alice" }),
  ]);
});

afterEach(async () => {
  await client?.close();
  await mcp?.close();
  await host.dispose();
});

/** The tool names `tools/list` gives, by skill (`_meta["skillbox/skill"]`). */
async function listedNames(): Promise<Record<string, string>> {
  const { tools } = await client.listTools();
  return Object.fromEntries(tools.map((tool) => [String(tool._meta?.["skillbox/skill"]), tool.name]));
}

describe("MCP tool names", () => {
  it("names a dotted skill by its plain provider-safe form, as @skillbox/llm does, and calls it", async () => {
    await connect();
    const names = await listedNames();
    expect(names).toMatchObject({
      "github.issues": "github_issues",
      "@acme/weather": "acme__weather",
      echo: "echo",
    });
    // The one scheme in @skillbox/core, which @skillbox/llm's toTools uses over the same skills.
    const shared = createToolNameMap(Object.keys(names).map((name) => ({ name })));
    for (const [skillName, toolName] of Object.entries(names)) {
      expect(shared.toolName({ name: skillName })).toBe(toolName);
      expect(toolName).toMatch(TOOL_NAME_PATTERN);
    }
    const issues = await client.callTool({ name: "github_issues", arguments: {} });
    expect(issues.isError).toBeFalsy();
    const execution = await host.executor.getExecution(String(issues._meta?.["skillbox/executionId"]));
    expect(execution?.skillName).toBe("github.issues");
  });

  it("suffixes a real collision deterministically and runs the right skill for each name", async () => {
    host.executor.registerHandler("which", (_input, context) => context.skill.name);
    // Registered in an order that differs from the names' order: the names must not depend on it.
    host.registry.registerMany([
      skill({ name: "a_b", handler: "which", input: {} }),
      skill({ name: "a.b", handler: "which", input: {} }),
    ]);
    await connect();
    const names = await listedNames();
    expect(names).toMatchObject({ a_b: "a_b", "a.b": "a_b_2" });
    const plain = await client.callTool({ name: "a_b", arguments: {} });
    const dotted = await client.callTool({ name: "a_b_2", arguments: {} });
    expect(plain.content).toEqual([{ type: "text", text: '"a_b"' }]);
    expect(dotted.content).toEqual([{ type: "text", text: '"a.b"' }]);

    // Another host with the same skills registered the other way round lists the same names.
    const other = createTemporaryHost();
    try {
      other.registry.registerMany([skill({ name: "a.b", input: {} }), skill({ name: "a_b", input: {} })]);
      const otherServer = createMcpServer({ registry: other.registry, executor: other.executor });
      const otherClient = new Client({ name: "mcp-names-test", version: "1.0.0" });
      const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
      await otherServer.server.connect(serverTransport);
      await otherClient.connect(clientTransport);
      const { tools } = await otherClient.listTools();
      expect(Object.fromEntries(tools.map((tool) => [tool.title, tool.name]))).toEqual({
        a_b: "a_b",
        "a.b": "a_b_2",
      });
      await otherClient.close();
      await otherServer.close();
    } finally {
      await other.dispose();
    }
  });

  it("keeps names with characters outside [a-zA-Z0-9_-] within the providers' rules", async () => {
    const long = `@a-very-long-organisation-scope/${"weather-forecast.".repeat(5)}tool`;
    host.registry.registerMany([
      skill({ name: "3d.render" }),
      skill({ name: long }),
      skill({ name: "@my.org/x.y" }),
    ]);
    await connect();
    const names = await listedNames();
    expect(names["3d.render"]).toBe("_3d_render");
    expect(names["@my.org/x.y"]).toBe("my_org__x_y");
    expect(names[long]).toHaveLength(64);
    for (const toolName of Object.values(names)) expect(toolName).toMatch(/^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/);
    const called = await client.callTool({ name: names[long] as string, arguments: { msg: "far" } });
    expect(
      called.structuredContent ?? JSON.parse((called.content as { text: string }[])[0]?.text ?? "null"),
    ).toEqual({
      echoed: "far",
    });
  });
});

describe("createMcpServer", () => {
  it("lists the enabled skills the owner may see, at their highest stable version", async () => {
    await connect();
    const { tools } = await client.listTools();
    const byTitle = new Map(tools.map((tool) => [tool.title, tool]));
    expect([...byTitle.keys()].sort()).toEqual([
      "@acme/weather",
      "echo",
      "github.issues",
      "limited",
      "shout",
    ]);

    const echo = byTitle.get("echo")!;
    expect(echo.name).toBe("echo");
    expect(echo.description).toBe("Returns the message");
    expect(echo.inputSchema).toEqual(MESSAGE_INPUT);
    expect(echo.outputSchema).toEqual({
      type: "object",
      properties: { echoed: { type: "string" } },
      required: ["echoed"],
    });
    expect(echo._meta).toEqual({ "skillbox/skill": "echo", "skillbox/version": "1.0.0" });

    expect(byTitle.get("@acme/weather")!.name).toBe("acme__weather");
    const issues = byTitle.get("github.issues")!;
    expect(issues.name).toBe("github_issues");
    expect(issues.inputSchema).toEqual({ type: "object" });
    expect(issues.outputSchema).toBeUndefined();
    expect(byTitle.get("shout")!.inputSchema).toEqual({
      type: "object",
      properties: { input: { type: "string", minLength: 1 } },
      required: ["input"],
      additionalProperties: false,
    });
  });

  it("shows an owner its own skills besides the global ones", async () => {
    await connect("alice");
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("alice-only");
  });

  it("answers a call with the output as structured content and as JSON text", async () => {
    await connect();
    const result = await client.callTool({ name: "echo", arguments: { msg: "hello" } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ echoed: "hello" });
    expect(result.content).toEqual([{ type: "text", text: '{"echoed":"hello"}' }]);
    const execution = await host.executor.getExecution(String(result._meta?.["skillbox/executionId"]));
    expect(execution).toMatchObject({ skillName: "echo", skillVersion: "1.0.0", apiKeyId: "public" });

    const weather = await client.callTool({ name: "acme__weather", arguments: { city: "Oslo" } });
    expect(weather.structuredContent).toEqual({ city: "Oslo", forecast: "sun" });
  });

  it("passes a wrapped input through and answers non-object outputs as text only", async () => {
    await connect();
    const shout = await client.callTool({ name: "shout", arguments: { input: "hi" } });
    expect(shout.content).toEqual([{ type: "text", text: '"HI"' }]);
    expect(shout.structuredContent).toBeUndefined();

    const issues = await client.callTool({ name: "github_issues", arguments: {} });
    expect(issues.content).toEqual([{ type: "text", text: "[]" }]);
  });

  it("reports a failed execution as a tool error with its code", async () => {
    await connect();
    const limited = await client.callTool({ name: "limited", arguments: { msg: "x" } });
    expect(limited.isError).toBe(true);
    expect(limited.content).toEqual([{ type: "text", text: "RATE_LIMITED: slow down" }]);
    expect(limited._meta?.["skillbox/status"]).toBe("error");

    const invalid = await client.callTool({ name: "echo", arguments: {} });
    expect(invalid.isError).toBe(true);
    expect((invalid.content as { text: string }[])[0]?.text).toMatch(/^INPUT_INVALID: /);
  });

  it("answers an unknown tool with a protocol error", async () => {
    await connect();
    const call = client.callTool({ name: "alice-only", arguments: {} });
    await expect(call).rejects.toBeInstanceOf(McpError);
    await expect(call).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  });

  it("notifies once per burst, and only when the owner's tool list changed", async () => {
    await connect();
    const before = changes.count;
    host.registry.registerMany([skill({ name: "first" })]);
    host.registry.register(skill({ name: "second" }));
    host.registry.register(skill({ name: "third" }));
    await changes.next(before);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["first", "second", "third"]),
    );

    // Invisible to "public", and a code-only change: neither may notify. The disable after
    // them must, and arrives as the next notification.
    host.registry.register(skill({ name: "bob-only", apiKeyId: "bob" }));
    host.registry.register(skill({ name: "first", handler: "shout" }));
    // Absence cannot be waited for: give the catalog three times its 50 ms settle window.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const echo = host.registry.resolveVersion("echo", undefined, "public")!;
    host.registry.setEnabledById(echo.id, false);
    await changes.next(before + 1);
    expect(changes.count).toBe(before + 2);
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain("echo");
  });

  it("notices registrations made through another connection to the database", async () => {
    await connect();
    const before = changes.count;
    // A second connection to the same file is another writer, as another process would be.
    const other = createSkillHost({
      database: host.databasePath,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    try {
      other.registry.register(skill({ name: "from-elsewhere" }));
      await changes.next(before);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("from-elsewhere");
    } finally {
      await other.close();
    }
  });

  it("releases the registry when closed", async () => {
    const listeners = host.registry.listenerCount("change");
    await connect();
    expect(host.registry.listenerCount("change")).toBe(listeners + 1);
    await mcp.close();
    expect(host.registry.listenerCount("change")).toBe(listeners);
  });
});
