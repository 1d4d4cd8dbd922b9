import { describe, expect, it } from "vitest";
import { echoSkill, type TestApi, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();
const KEYS = { "alice-key": "alice", "bob-key": "bob" };

async function run(api: TestApi, key: string, input: unknown, skill = "echo"): Promise<string> {
  const response = await api.call("POST", `/api/skills/${skill}/execute`, { key, json: { input } });
  return response.body.id ?? response.body.error.data.executionId;
}

describe("createHttpApp: GET /api/executions", () => {
  it("pages through the caller's own executions, newest first, with the total", async () => {
    const api = await startApi({ apiKeys: KEYS });
    api.host.registry.register(echoSkill());
    const aliceIds: string[] = [];
    for (let index = 0; index < 5; index++) aliceIds.push(await run(api, "alice-key", { msg: `a${index}` }));
    await run(api, "bob-key", { msg: "b0" });
    await run(api, "bob-key", { msg: "b1" });
    const newestFirst = [...aliceIds].reverse();

    const first = await api.call("GET", "/api/executions?limit=2", { key: "alice-key" });
    const second = await api.call("GET", "/api/executions?limit=2&offset=2", { key: "alice-key" });
    const last = await api.call("GET", "/api/executions?limit=2&offset=4", { key: "alice-key" });
    const bob = await api.call("GET", "/api/executions", { key: "bob-key" });

    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ total: 5, limit: 2, offset: 0 });
    expect(first.body.executions.map((execution: { id: string }) => execution.id)).toEqual(
      newestFirst.slice(0, 2),
    );
    expect(second.body.executions.map((execution: { id: string }) => execution.id)).toEqual(
      newestFirst.slice(2, 4),
    );
    expect(last.body.executions.map((execution: { id: string }) => execution.id)).toEqual(
      newestFirst.slice(4),
    );
    expect(bob.body).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(bob.body.executions.every((execution: { apiKeyId: string }) => execution.apiKeyId === "bob")).toBe(
      true,
    );
  });

  it("filters by skill and status (a comma-separated list)", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());
    api.host.registry.register(echoSkill({ name: "other" }));
    await run(api, "", { msg: "ok" });
    await run(api, "", { msg: 1 }); // INPUT_INVALID: recorded as an error
    await run(api, "", { msg: "ok" }, "other");

    const errors = await api.call("GET", "/api/executions?status=error");
    const echoes = await api.call("GET", "/api/executions?skill=echo&status=success,error");
    const others = await api.call("GET", "/api/executions?skill=other&status=error");

    expect(errors.body.total).toBe(1);
    expect(errors.body.executions[0].error.code).toBe("INPUT_INVALID");
    expect(echoes.body.total).toBe(2);
    expect(others.body).toMatchObject({ total: 0, executions: [] });
  });

  it("refuses an invalid page or filter, naming the parameter (400)", async () => {
    const api = await startApi();
    const responses = await Promise.all(
      ["limit=0", "limit=1001", "limit=ten", "offset=-1", "status=done", "since=yesterday", "owner=bob"].map(
        (query) => api.call("GET", `/api/executions?${query}`),
      ),
    );
    const parameters = ["limit", "limit", "limit", "offset", "status", "since", "owner"];

    responses.forEach((response, index) => {
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe("REQUEST_INVALID");
      expect(response.body.error.message).toContain(`\`${parameters[index]}\``);
    });
  });
});

describe("createHttpApp: GET /api/executions/:id", () => {
  it("returns the caller's own execution and answers 404 for another owner's", async () => {
    const api = await startApi({ apiKeys: KEYS });
    api.host.registry.register(echoSkill());
    const id = await run(api, "alice-key", { msg: "mine" });

    const own = await api.call("GET", `/api/executions/${id}`, { key: "alice-key" });
    const foreign = await api.call("GET", `/api/executions/${id}`, { key: "bob-key" });
    const missing = await api.call("GET", "/api/executions/no-such-id", { key: "alice-key" });

    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ id, apiKeyId: "alice", status: "success", output: { echoed: "mine" } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("EXECUTION_NOT_FOUND");
    expect(missing.status).toBe(404);
  });
});
