import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createMcpServer, type McpServerHandle } from "@skillbox/server";
import { afterEach, describe, expect, it } from "vitest";
import { useDistributedHosts } from "./host-fixture.js";

const hosts = useDistributedHosts();
const opened: { client: Client; server: McpServerHandle }[] = [];

afterEach(async () => {
  for (const { client, server } of opened.splice(0)) {
    await client.close();
    await server.close();
  }
});

describe("MCP over a distributed host", () => {
  it("answers a tool call on an API host with the result a worker host computed, recorded in the shared record", async () => {
    const database = hosts.database();
    const api = await hosts.openHost({
      database,
      role: "api",
      prefix: "mcp",
      echo: () => ({ echoed: "api" }),
    });
    await hosts.openHost({
      database,
      role: "worker",
      prefix: "mcp",
      echo: (input) => ({ echoed: `${input.msg} from the worker` }),
    });
    const server = createMcpServer({ registry: api.registry, executor: api.executor, owner: "alice" });
    const client = new Client({ name: "distributed-mcp-test", version: "1.0.0" });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await server.server.connect(serverTransport);
    await client.connect(clientTransport);
    opened.push({ client, server });

    const result = await client.callTool({ name: "echo", arguments: { msg: "hi" } });
    expect(result.isError).not.toBe(true);
    expect(
      result.structuredContent ?? JSON.parse((result.content as { text: string }[])[0]?.text ?? "null"),
    ).toEqual({
      echoed: "hi from the worker",
    });
    const [recorded] = await api.executor.listExecutions({ owner: "alice", skill: "echo" });
    expect(recorded).toMatchObject({ status: "success", output: { echoed: "hi from the worker" } });
  });
});
