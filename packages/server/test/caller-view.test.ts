import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Task, TaskState } from "@a2a-js/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { SkillHost } from "@skillbox/core";
import { loadSkills, type SkillLoader } from "@skillbox/loader";
import { createMcpServer, type McpServerHandle } from "@skillbox/server";
import { afterEach, describe, expect, it } from "vitest";
import { messageRequest, useA2aTestServer } from "./a2a/a2a-test-server.js";

const startServer = useA2aTestServer();
const mcpServers: McpServerHandle[] = [];
const mcpClients: Client[] = [];
const loaders: SkillLoader[] = [];

afterEach(async () => {
  for (const loader of loaders.splice(0)) loader.close();
  for (const client of mcpClients.splice(0)) await client.close();
  for (const server of mcpServers.splice(0)) await server.close();
});

/** Every key of a JSON value, at any depth. */
function keysOf(value: unknown): string[] {
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => [key, ...keysOf(item)]);
}

/**
 * Registers `crash`, a worker skill whose handler module lives in the host's temp folder — its
 * stack names that folder — and `refused`, an inline skill throwing a plain Error coded
 * `ECONNREFUSED`, as a database driver does.
 */
function registerFailingSkills(host: SkillHost & { directory: string }): void {
  const file = join(host.directory, "crash.mjs");
  writeFileSync(file, 'export default function crash() { throw new Error("the widget broke"); }\n');
  host.registry.register({
    name: "crash",
    version: "1.0.0",
    handler: pathToFileURL(file).href,
    runtime: "worker",
    apiKeyId: "public",
  });
  host.registry.register({ name: "refused", version: "1.0.0", handler: "refused", apiKeyId: "public" });
  host.executor.registerHandler("refused", () => {
    throw Object.assign(new Error("the database is down"), { code: "ECONNREFUSED" });
  });
  host.registry.register({ name: "any", version: "1.0.0", handler: "any", apiKeyId: "public" });
  host.executor.registerHandler("any", () => ({ ran: true }));
}

async function connectMcp(host: SkillHost): Promise<Client> {
  const server = createMcpServer({ registry: host.registry, executor: host.executor });
  mcpServers.push(server);
  const client = new Client({ name: "caller-view-test", version: "1.0.0" });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.server.connect(serverTransport);
  await client.connect(clientTransport);
  mcpClients.push(client);
  return client;
}

/** `{"a":{"a":…1…}}` with `levels` objects, as JSON text. */
function nestedText(levels: number): string {
  let text = "1";
  for (let level = 0; level < levels; level++) text = `{"a":${text}}`;
  return text;
}

describe("the caller view of failed executions", () => {
  it("HTTP execute and GET /api/executions/:id answer HANDLER_ERROR without a stack or host path", async () => {
    const running = await startServer();
    registerFailingSkills(running.host);

    const executed = await running.call("POST", "/api/skills/crash/execute", { json: { input: {} } });
    const fetched = await running.call("GET", `/api/executions/${executed.body.id}`);

    expect(executed.status).toBe(200);
    expect(executed.body.error).toMatchObject({
      code: "HANDLER_ERROR",
      message: "crash@1.0.0: the widget broke",
    });
    for (const body of [executed.body, fetched.body]) {
      expect(keysOf(body)).not.toContain("stack");
      expect(JSON.stringify(body)).not.toContain(running.host.directory);
    }
    expect(fetched.body.error).toEqual(executed.body.error);
    // The audit trail keeps the stack for the operator.
    const stored = await running.host.executor.getExecution(executed.body.id);
    expect((stored?.error?.data as { stack?: string } | undefined)?.stack).toContain(running.host.directory);
  });

  it("HTTP execute keeps a plain Error's code as error.data.cause.code", async () => {
    const running = await startServer();
    registerFailingSkills(running.host);

    const { body } = await running.call("POST", "/api/skills/refused/execute", { json: { input: {} } });

    expect(body.error.code).toBe("HANDLER_ERROR");
    expect(body.error.data).toEqual({ name: "Error", cause: { name: "Error", code: "ECONNREFUSED" } });
  });

  it("an MCP tool call (real SDK client) answers without a stack or host path, with the cause code in _meta", async () => {
    const running = await startServer();
    registerFailingSkills(running.host);
    const client = await connectMcp(running.host);

    const crashed = await client.callTool({ name: "crash", arguments: {} });
    const refused = await client.callTool({ name: "refused", arguments: {} });

    expect(crashed.isError).toBe(true);
    expect(crashed.content).toEqual([{ type: "text", text: "HANDLER_ERROR: crash@1.0.0: the widget broke" }]);
    expect(keysOf(crashed)).not.toContain("stack");
    expect(JSON.stringify(crashed)).not.toContain(running.host.directory);
    expect(refused._meta?.["skillbox/error"]).toMatchObject({
      code: "HANDLER_ERROR",
      data: { cause: { code: "ECONNREFUSED" } },
    });
  });

  it("an A2A task answers without a stack or host path, with the cause code in metadata.error", async () => {
    const running = await startServer();
    registerFailingSkills(running.host);
    const client = await running.client();

    const crashed = (await client.sendMessage(messageRequest([{ data: {} }], { skill: "crash" }))) as Task;
    const refused = (await client.sendMessage(messageRequest([{ data: {} }], { skill: "refused" }))) as Task;

    expect(crashed.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(keysOf(crashed)).not.toContain("stack");
    expect(JSON.stringify(crashed)).not.toContain(running.host.directory);
    expect(refused.metadata?.error).toMatchObject({
      code: "HANDLER_ERROR",
      data: { cause: { name: "Error", code: "ECONNREFUSED" } },
    });
  });
});

/** A skill package folder `name` under `skills`: its manifest (`manifest` over defaults) and its `index.mjs`. */
function writeSkillPackage(
  skills: string,
  { name, manifest = {}, code }: { name: string; manifest?: Record<string, unknown>; code: string },
): void {
  const folder = join(skills, name);
  mkdirSync(folder, { recursive: true });
  const skill = {
    name,
    version: "1.0.0",
    description: name,
    handler: "./index.mjs",
    input: { type: "object" },
  };
  writeFileSync(join(folder, "skill.json"), JSON.stringify({ ...skill, ...manifest }));
  writeFileSync(join(folder, "index.mjs"), code);
}

describe("the caller view of handlers that fail to load", () => {
  it("HTTP answers HANDLER_INVALID of loaded skills (a missing import inline, an import-time throw in a worker) without host paths", async () => {
    const running = await startServer();
    const skills = join(running.host.directory, "skills");
    writeSkillPackage(skills, {
      name: "imp",
      code: 'import x from "./missing-file.mjs";\nexport default () => x;\n',
    });
    writeSkillPackage(skills, {
      name: "wimp",
      manifest: { runtime: "worker" },
      code: 'throw new Error("import-time failure");\nexport default () => ({});\n',
    });
    const { loader } = await loadSkills({
      dirs: [skills],
      npm: false,
      registry: running.host.registry,
      executor: running.host.executor,
    });
    loaders.push(loader);

    for (const name of ["imp", "wimp"]) {
      const executed = await running.call("POST", `/api/skills/${name}/execute`, { json: { input: {} } });
      const fetched = await running.call("GET", `/api/executions/${executed.body.id}`);

      expect(executed.body.error).toEqual({
        code: "HANDLER_INVALID",
        message: `${name}@1.0.0 could not load its handler; the host's log says why`,
      });
      expect(fetched.body.error).toEqual(executed.body.error);
      for (const body of [executed.body, fetched.body]) {
        expect(JSON.stringify(body)).not.toContain(running.host.directory);
        expect(JSON.stringify(body)).not.toContain("Require stack");
      }
      // The operator's audit row keeps the file and the reason.
      const stored = await running.host.executor.getExecution(executed.body.id);
      expect(stored?.error?.message).toContain(join(skills, name));
    }
  });
});

describe("over-deep input", () => {
  it("HTTP execute refuses a body nested 10,000 deep with 400 before running, naming limit and path", async () => {
    const running = await startServer();
    registerFailingSkills(running.host);

    const response = await fetch(`${running.server.url}/api/skills/any/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"input":${nestedText(10_000)}}`,
    });
    const body = (await response.json()) as { error: { code: string; message: string; data: unknown } };

    expect(response.status).toBe(400);
    expect(body.error.code).toBe("REQUEST_INVALID");
    expect(body.error.message).toContain("100 levels");
    expect(body.error.data).toMatchObject({ maxDepth: 100, path: expect.stringMatching(/^input\.a\.a/) });
    expect(await running.host.executor.countExecutions()).toBe(0);
  });

  it("HTTP execute runs input at the executor's limit", async () => {
    const running = await startServer();
    registerFailingSkills(running.host);

    const response = await running.call("POST", "/api/skills/any/execute", {
      json: { input: JSON.parse(nestedText(100)) },
    });

    expect(response.status).toBe(200);
    expect(response.body.status).toBe("success");
  });

  it("MCP tool arguments nested 10,000 deep are refused with INPUT_INVALID and recorded as such, never run", async () => {
    const running = await startServer();
    registerFailingSkills(running.host);
    const mcp = await connectMcp(running.host);

    const tool = await mcp.callTool({
      name: "any",
      arguments: JSON.parse(nestedText(10_000)),
    });

    expect(tool.isError).toBe(true);
    expect(tool.content).toEqual([
      { type: "text", text: expect.stringMatching(/^INPUT_INVALID: .*100 levels/) },
    ]);
    const executions = await running.host.executor.listExecutions({});
    expect(executions.map((execution) => [execution.status, execution.error?.code])).toEqual([
      ["error", "INPUT_INVALID"],
    ]);
  });

  it("A2A refuses a data part nested 10,000 deep with Invalid params before the SDK parses it", async () => {
    const running = await startServer();
    registerFailingSkills(running.host);
    const message = `{"messageId":"m1","role":"ROLE_USER","parts":[{"data":${nestedText(10_000)}}],"metadata":{"skill":"any"}}`;

    const response = await fetch(`${running.server.url}/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json", "A2A-Version": "1.0" },
      body: `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":${message}}}`,
    });
    const body = (await response.json()) as { error: { message: string } };

    expect(body).toMatchObject({ id: 7, error: { code: -32602, data: { maxDepth: 105 } } });
    expect(body.error.message).toContain("params.message.parts[0].data.a");
    expect(await running.host.executor.countExecutions()).toBe(0);
  });

  it("A2A refuses input one level deeper than the limit: a data part at the route, JSON text in the executor", async () => {
    const running = await startServer();
    registerFailingSkills(running.host);
    const client = await running.client();

    await expect(
      client.sendMessage(messageRequest([{ data: JSON.parse(nestedText(101)) }], { skill: "any" })),
    ).rejects.toThrow(/a skill's input may nest 100 levels/);
    const task = (await client.sendMessage(
      messageRequest([{ text: nestedText(101) }], { skill: "any" }),
    )) as Task;

    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(task.metadata?.error).toMatchObject({ code: "INPUT_INVALID", data: { maxDepth: 100 } });
    expect(
      (await running.host.executor.listExecutions({})).map((execution) => execution.error?.code),
    ).toEqual(["INPUT_INVALID"]);
  });
});
