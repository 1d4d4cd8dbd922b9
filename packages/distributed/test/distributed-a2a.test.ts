import { createHttpApp } from "@skillbox/server";
import { describe, expect, it } from "vitest";
import { useDistributedHosts } from "./host-fixture.js";

const hosts = useDistributedHosts();

describe("A2A over a distributed host", () => {
  it("answers message/send on an API host with the output a worker host computed", async () => {
    const database = hosts.database();
    const api = await hosts.openHost({
      database,
      role: "api",
      prefix: "a2a",
      echo: () => ({ echoed: "api" }),
    });
    await hosts.openHost({
      database,
      role: "worker",
      prefix: "a2a",
      echo: (input) => ({ echoed: `${input.msg} from the worker` }),
    });
    const app = createHttpApp({ registry: api.registry, executor: api.executor, studio: false });
    const response = await app.request("http://localhost/a2a", {
      method: "POST",
      headers: { "content-type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: {
          message: {
            messageId: "m1",
            role: "ROLE_USER",
            parts: [{ data: { msg: "hi" } }],
            metadata: { skill: "echo" },
          },
        },
      }),
    });
    const body = (await response.json()) as { result?: { task?: Record<string, unknown> } };
    expect(response.status, JSON.stringify(body)).toBe(200);
    const task = body.result?.task ?? body.result;
    expect(JSON.stringify(task)).toContain("TASK_STATE_COMPLETED");
    expect(JSON.stringify(task)).toContain("hi from the worker");
    const executionId = (task as { metadata?: { executionId?: string } } | undefined)?.metadata?.executionId;
    expect(executionId).toBeDefined();
    const recorded = await api.executor.getExecution(executionId as string);
    expect(recorded).toMatchObject({ status: "success", output: { echoed: "hi from the worker" } });
  });
});
