import { describe, expect, it } from "vitest";
import { createHttpApp } from "../src/index.js";
import { registerGuardedSkill, registerSlowSkill } from "./http-gated-skill.js";
import { echoSkill, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();
const KEYS = { "alice-key": "alice", "bob-key": "bob" };

describe("createHttpApp: POST /api/skills/:name/execute with Prefer", () => {
  it("answers respond-async with 202, Location and the queued record, and the execution runs on", async () => {
    const api = await startApi({ apiKeys: KEYS });
    const slow = registerSlowSkill(api);

    const accepted = await api.call("POST", "/api/skills/slow/execute", {
      key: "alice-key",
      json: { input: {}, sessionId: "s-1" },
      headers: { prefer: "respond-async" },
    });
    slow.first.open();
    slow.second.open();
    const location = accepted.headers.get("location");
    const finished = await api.call("GET", `${location}?wait=30`, { key: "alice-key" });

    expect(accepted.status).toBe(202);
    expect(location).toBe(`/api/executions/${accepted.body.id}`);
    expect(accepted.headers.get("preference-applied")).toBe("respond-async");
    expect(accepted.body).toMatchObject({
      skillName: "slow",
      apiKeyId: "alice",
      sessionId: "s-1",
      output: null,
    });
    expect(["queued", "running"]).toContain(accepted.body.status);
    expect(finished.status).toBe(200);
    expect(finished.body).toMatchObject({ id: accepted.body.id, status: "success", output: { done: true } });
    expect(finished.body.progress).toMatchObject({ progress: 2, total: 2 });
  });

  it("answers respond-async, wait=N with the final record when it comes in time", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());

    const response = await api.call("POST", "/api/skills/echo/execute", {
      json: { input: { msg: "soon" } },
      headers: { prefer: "respond-async, wait=30" },
    });

    expect(response.status).toBe(200);
    expect(response.headers.get("location")).toBeNull();
    expect(response.body).toMatchObject({ status: "success", output: { echoed: "soon" } });
  });

  it("answers respond-async, wait=N with 202 when the time is up first", async () => {
    const api = await startApi();
    const slow = registerSlowSkill(api);

    const response = await api.call("POST", "/api/skills/slow/execute", {
      json: { input: {} },
      headers: { prefer: "respond-async, wait=1" },
    });
    slow.first.open();
    slow.second.open();

    expect(response.status).toBe(202);
    expect(response.headers.get("location")).toBe(`/api/executions/${response.body.id}`);
    expect(["queued", "running"]).toContain(response.body.status);
  });

  it("answers input the schema refuses like a synchronous execute once it ran in time (422)", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());

    const response = await api.call("POST", "/api/skills/echo/execute", {
      json: { input: { msg: 1 } },
      headers: { prefer: "respond-async, wait=30" },
    });

    expect(response.status).toBe(422);
    expect(response.body.error).toMatchObject({
      code: "INPUT_INVALID",
      data: { executionId: expect.any(String) },
    });
  });

  it("ignores preferences it does not know and runs synchronously", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());

    const response = await api.call("POST", "/api/skills/echo/execute", {
      json: { input: { msg: "now" } },
      headers: { prefer: "return=minimal; foo=bar, handling=strict" },
    });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: "success", output: { echoed: "now" } });
  });

  it.each([
    ["respond-async=", "respond-async="],
    ["respond-async=garbage", '"respond-async" a value'],
    ["respond-async, wait=later", '"wait"'],
    ['respond-async, x="open', "unterminated"],
    [`respond-async, ${"x".repeat(2000)}`, "1024"],
  ])(
    "refuses the malformed Prefer %j with 400 naming the header, recording nothing",
    async (prefer, problem) => {
      const api = await startApi();
      api.host.registry.register(echoSkill());

      const response = await api.call("POST", "/api/skills/echo/execute", {
        json: { input: { msg: "x" } },
        headers: { prefer },
      });

      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe("REQUEST_INVALID");
      expect(response.body.error.message).toContain("`Prefer`");
      expect(response.body.error.message).toContain(problem);
      expect(await api.host.executor.countExecutions({})).toBe(0);
    },
  );

  it("answers 202 with Location when a synchronous execute stops awaiting approval", async () => {
    const api = await startApi({ apiKeys: KEYS });
    registerGuardedSkill(api);

    const response = await api.call("POST", "/api/skills/guarded/execute", {
      key: "alice-key",
      json: { input: { msg: "please" } },
    });

    expect(response.status).toBe(202);
    expect(response.headers.get("location")).toBe(`/api/executions/${response.body.id}`);
    expect(response.body).toMatchObject({ status: "awaiting_approval", apiKeyId: "alice", output: null });
    expect(response.body.approval).toMatchObject({ decision: null, requestedBy: "skill" });
  });
});

describe("createHttpApp: GET /api/executions/:id?wait=", () => {
  it("answers with the current record once the wait is up, and the final one when it ends", async () => {
    const api = await startApi();
    const slow = registerSlowSkill(api);
    const { body } = await api.call("POST", "/api/skills/slow/execute", {
      json: { input: {} },
      headers: { prefer: "respond-async" },
    });

    const early = await api.call("GET", `/api/executions/${body.id}?wait=1`);
    const waiting = api.call("GET", `/api/executions/${body.id}?wait=30`);
    slow.first.open();
    slow.second.open();
    const late = await waiting;

    expect(early.status).toBe(200);
    expect(["queued", "running"]).toContain(early.body.status);
    expect(late.body).toMatchObject({ status: "success", output: { done: true } });
  });

  it("answers at once for an execution awaiting approval", async () => {
    const api = await startApi();
    registerGuardedSkill(api);
    const { body } = await api.call("POST", "/api/skills/guarded/execute", {
      json: { input: { msg: "hi" } },
    });

    // A wait of 60 s that did not answer at once would outlast the test's timeout.
    const response = await api.call("GET", `/api/executions/${body.id}?wait=60`);

    expect(response.body).toMatchObject({ id: body.id, status: "awaiting_approval" });
  });

  it("answers 404 to another owner's long-poll", async () => {
    const api = await startApi({ apiKeys: KEYS });
    const slow = registerSlowSkill(api);
    const { body } = await api.call("POST", "/api/skills/slow/execute", {
      key: "alice-key",
      json: { input: {} },
      headers: { prefer: "respond-async" },
    });

    const foreign = await api.call("GET", `/api/executions/${body.id}?wait=30`, { key: "bob-key" });
    slow.first.open();
    slow.second.open();

    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("EXECUTION_NOT_FOUND");
  });

  it("stops waiting when the client goes away", async () => {
    const api = await startApi();
    const slow = registerSlowSkill(api);
    const { body } = await api.call("POST", "/api/skills/slow/execute", {
      json: { input: {} },
      headers: { prefer: "respond-async" },
    });
    // Through app.request the client's signal is the request's own, and the answer is observable
    // after the client left: a wait that went on would answer after 60 s, past the test's timeout.
    const app = createHttpApp({ registry: api.host.registry, executor: api.host.executor });
    const controller = new AbortController();
    const answering = app.request(
      new Request(`http://localhost/api/executions/${body.id}?wait=60`, { signal: controller.signal }),
    );
    controller.abort();
    const response = await answering;
    slow.first.open();
    slow.second.open();

    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("WAIT_ABORTED");
    expect((await api.host.executor.wait(body.id)).status).toBe("success");
  });

  it.each(["wait=61", "wait=soon", "wait=-1", "wait=", "wait=1.5"])(
    "refuses %s with 400 naming `wait`",
    async (query) => {
      const api = await startApi();
      api.host.registry.register(echoSkill());
      const { body } = await api.call("POST", "/api/skills/echo/execute", { json: { input: { msg: "x" } } });

      const response = await api.call("GET", `/api/executions/${body.id}?${query}`);

      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe("REQUEST_INVALID");
      expect(response.body.error.message).toContain("`wait`");
    },
  );
});
