import { describe, expect, it } from "vitest";
import { echoSkill, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();

describe("GET /api/executions filters", () => {
  it("lists one execution's ctx.call children with parentExecutionId", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());
    api.host.registry.register({
      name: "caller",
      version: "1.0.0",
      apiKeyId: "public",
      handler: "caller",
      requires: { echo: "^1.0.0" },
    });
    api.host.executor.registerHandler("caller", (_input, ctx) => ctx.call("echo", { msg: "nested" }));
    const parent = await api.call("POST", "/api/skills/caller/execute", { json: { input: {} } });
    await api.call("POST", "/api/skills/echo/execute", { json: { input: { msg: "alone" } } });
    expect(parent.status).toBe(200);

    const children = await api.call("GET", `/api/executions?parentExecutionId=${parent.body.id}`);
    expect(children.status).toBe(200);
    expect(children.body.executions.map((execution: { skillName: string }) => execution.skillName)).toEqual([
      "echo",
    ]);
    expect(children.body.executions[0].parentExecutionId).toBe(parent.body.id);
  });

  it("lists executions created before `until`, and names a bad date", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());
    await api.call("POST", "/api/skills/echo/execute", { json: { input: { msg: "hi" } } });

    const before = await api.call("GET", "/api/executions?until=2000-01-01T00:00:00Z");
    expect(before.body.executions).toEqual([]);
    const after = await api.call("GET", "/api/executions?until=2999-01-01T00:00:00Z");
    expect(after.body.executions).toHaveLength(1);
    const bad = await api.call("GET", "/api/executions?until=yesterday");
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("until");
  });
});
