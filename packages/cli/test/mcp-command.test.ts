import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type CliProject, createCliProject, SKILLBOX_BIN } from "@skillbox/test-helpers/cli-process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { echoFolder, skillFolder } from "./cli-fixtures.js";

let project: CliProject;

beforeEach(() => {
  project = createCliProject();
  project.tree.writeFolder("plugins/echo", echoFolder());
  // A handler that prints to stdout: it must not reach the protocol stream.
  project.tree.writeFolder(
    "plugins/chatty",
    skillFolder(
      { name: "chatty", input: { type: "object" } },
      'console.log("chatty was here");\n  return { ok: true };',
    ),
  );
});

afterEach(async () => {
  await project.cleanup();
});

describe("skillbox mcp", { timeout: 60_000 }, () => {
  it("serves the loaded skills as MCP tools on stdio, keeping stdout for the protocol", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [SKILLBOX_BIN, "mcp"],
      cwd: project.tree.root,
      env: { ...(process.env as Record<string, string>), NO_COLOR: "1", SKILLBOX_DB: project.databasePath },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: "skillbox-cli-test", version: "1.0.0" });
    const protocolErrors: Error[] = [];
    client.onerror = (error) => protocolErrors.push(error);
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(["chatty", "echo"]);
      const echoed = await client.callTool({ name: "echo", arguments: { msg: "over stdio" } });
      expect(echoed.structuredContent).toEqual({ echoed: "over stdio" });
      const chatty = await client.callTool({ name: "chatty", arguments: {} });
      expect(chatty.isError).not.toBe(true);
      expect(stderr).toContain("chatty was here");
      expect(protocolErrors).toEqual([]);
    } finally {
      await client.close();
    }
    expect(stderr).toMatch(/executed\s+echo@1\.0\.0 → success/);
  });

  it("prints nothing but JSON-RPC on stdout and exits 0 when the client closes stdin", async () => {
    const server = project.start(["mcp"], { openStdin: true });
    const send = (message: unknown) => server.child.stdin?.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    await server.waitForOutput(/"id":1/);
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "chatty", arguments: {} } });
    await server.waitForOutput(/"id":2/);
    server.child.stdin?.end();
    const result = await server.finished();
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split("\n").filter((line) => line !== "");
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
    expect(result.stderr).toMatch(/stopping\s+client disconnected/);
  });
});
