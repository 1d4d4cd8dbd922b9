import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { createTemporaryDirectory } from "@skillbox/test-helpers/temporary-host";
import {
  createTemporaryTree,
  type TemporaryTree,
  type TreeContent,
} from "@skillbox/test-helpers/temporary-tree";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ToolListChanges, watchToolListChanges } from "./fixtures/mcp/tool-list-changes.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/mcp/stdio-server.mjs", import.meta.url));
const BUILT_SERVER = fileURLToPath(new URL("../dist/index.js", import.meta.url));

/** A skill folder: `skill.json` plus a TypeScript handler module (loaded by the child with jiti). */
function skillFolder(manifest: Record<string, unknown>, handlerBody: string): Record<string, TreeContent> {
  return {
    "skill.json": { version: "1.0.0", handler: "./index.ts", ...manifest },
    "index.ts": `export default function handler(input: any): unknown {\n  ${handlerBody}\n}\n`,
  };
}

let tree: TemporaryTree;
let databaseDirectory: string;
let transport: StdioClientTransport;
let client: Client;
let changes: ToolListChanges;
let stderr = "";

beforeAll(async () => {
  if (!existsSync(BUILT_SERVER)) throw new Error("packages/server/dist is missing: run `pnpm build` first");
  tree = createTemporaryTree("skillbox-mcp-stdio-");
  tree.writeFolder(
    "echo",
    skillFolder(
      {
        name: "echo",
        description: "Returns the message",
        input: { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] },
        output: { type: "object", properties: { echoed: { type: "string" } }, required: ["echoed"] },
      },
      "return { echoed: input.msg };",
    ),
  );
  tree.writeFolder(
    "@acme/weather",
    skillFolder(
      {
        name: "@acme/weather",
        input: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        output: { type: "object", properties: { forecast: { type: "string" } } },
      },
      'return { forecast: "sun in " + input.city };',
    ),
  );
  tree.writeFolder(
    "fail",
    skillFolder(
      { name: "fail", input: { type: "object" } },
      'throw new Error("the weather station is down");',
    ),
  );
  databaseDirectory = createTemporaryDirectory("skillbox-mcp-stdio-db-");
  transport = new StdioClientTransport({
    command: process.execPath,
    args: [FIXTURE, join(databaseDirectory, "skillbox.db"), tree.root],
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  client = new Client({ name: "mcp-stdio-test", version: "1.0.0" });
  changes = watchToolListChanges(client);
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  tree?.cleanup();
  if (databaseDirectory !== undefined) rmSync(databaseDirectory, { recursive: true, force: true });
});

describe("serveMcpStdio", () => {
  it("lists the loaded skills as tools with their schemas", async () => {
    expect(client.getServerVersion()).toMatchObject({ name: "skillbox" });
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(["acme__weather", "echo", "fail"]);
    const echo = tools.find((tool) => tool.name === "echo")!;
    expect(echo.description).toBe("Returns the message");
    expect(echo.inputSchema).toEqual({
      type: "object",
      properties: { msg: { type: "string" } },
      required: ["msg"],
    });
    expect(echo.outputSchema).toMatchObject({ type: "object", required: ["echoed"] });
    expect(tools.find((tool) => tool.name === "acme__weather")?.title).toBe("@acme/weather");
  });

  it("runs a tool and answers with structured content", async () => {
    const echo = await client.callTool({ name: "echo", arguments: { msg: "over stdio" } });
    expect(echo.isError).toBeFalsy();
    expect(echo.structuredContent).toEqual({ echoed: "over stdio" });
    expect(echo.content).toEqual([{ type: "text", text: '{"echoed":"over stdio"}' }]);

    const weather = await client.callTool({ name: "acme__weather", arguments: { city: "Oslo" } });
    expect(weather.structuredContent).toEqual({ forecast: "sun in Oslo" });
  });

  it("reports a failing skill as a tool error and an unknown tool as a protocol error", async () => {
    const failed = await client.callTool({ name: "fail", arguments: {} });
    expect(failed.isError).toBe(true);
    expect(failed.content).toEqual([
      { type: "text", text: "HANDLER_ERROR: fail@1.0.0: the weather station is down" },
    ]);
    await expect(client.callTool({ name: "nope", arguments: {} })).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
    });
  });

  it("notifies the client when a hot reload adds a skill", async () => {
    const before = changes.count;
    tree.writeFolder(
      "greet",
      skillFolder(
        { name: "greet", input: { type: "object", properties: { name: { type: "string" } } } },
        'return "Hello, " + input.name + "!";',
      ),
    );
    await changes.next(before);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("greet");
    const greeting = await client.callTool({ name: "greet", arguments: { name: "Ada" } });
    expect(greeting.content).toEqual([{ type: "text", text: '"Hello, Ada!"' }]);
  });

  it("ends the server process when the client hangs up", async () => {
    const exited = new Promise<void>((resolve) => {
      transport.stderr?.on("end", () => resolve());
    });
    await client.close();
    await exited;
    expect(stderr).toContain("stdio-server: closed cleanly");
  });
});
