import { describe, expect, it } from "vitest";
import { echoSkill, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();
const KEYS = { "alice-key": "alice", "bob-key": "bob" };

describe("createHttpApp: GET /api/skills?stats=1", () => {
  it("adds each skill's recent stats over the caller's own executions only", async () => {
    const api = await startApi({ apiKeys: KEYS });
    api.host.registry.register(echoSkill());
    api.host.registry.register(echoSkill({ name: "idle" }));
    for (const msg of ["a", "b", "c"]) {
      await api.call("POST", "/api/skills/echo/execute", { key: "alice-key", json: { input: { msg } } });
    }
    // Refused by the input schema: recorded as an error of alice's.
    await api.call("POST", "/api/skills/echo/execute", { key: "alice-key", json: { input: {} } });
    for (let index = 0; index < 5; index++) {
      await api.call("POST", "/api/skills/echo/execute", { key: "bob-key", json: { input: {} } });
    }

    const alice = await api.call("GET", "/api/skills?stats=1", { key: "alice-key" });
    const bob = await api.call("GET", "/api/skills?stats=1", { key: "bob-key" });

    expect(alice.status).toBe(200);
    expect(alice.body.statsWindow).toEqual({ executions: 1000, since: null });
    const echo = alice.body.skills.find((skill: { name: string }) => skill.name === "echo");
    expect(echo.stats).toMatchObject({
      executions: 4,
      finished: 4,
      statuses: { success: 3, error: 1 },
      successRate: 0.75,
    });
    expect(echo.stats.p50DurationMs).toEqual(expect.any(Number));
    expect(echo.stats.p95DurationMs).toBeGreaterThanOrEqual(echo.stats.p50DurationMs);
    expect(echo.stats).not.toHaveProperty("skillId");
    expect(alice.body.skills.find((skill: { name: string }) => skill.name === "idle").stats).toBeNull();
    const bobEcho = bob.body.skills.find((skill: { name: string }) => skill.name === "echo");
    expect(bobEcho.stats).toMatchObject({ executions: 5, statuses: { error: 5 }, successRate: 0 });
  });

  it("gives stats per version with ?versions=all, over ?statsWindow and ?statsSince", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill({ version: "1.0.0" }));
    api.host.registry.register(echoSkill({ version: "2.0.0" }));
    for (let index = 0; index < 3; index++) {
      await api.call("POST", "/api/skills/echo/execute", { json: { input: { msg: "x" }, version: "1.0.0" } });
    }
    await api.call("POST", "/api/skills/echo/execute", { json: { input: { msg: "x" } } });

    const all = await api.call("GET", "/api/skills?versions=all&stats=1");
    const lastTwo = await api.call("GET", "/api/skills?versions=all&stats=1&statsWindow=2");
    const future = new Date(Date.now() + 60_000).toISOString();
    const none = await api.call("GET", `/api/skills?stats=1&statsSince=${encodeURIComponent(future)}`);

    const executions = (body: { skills: { version: string; stats: { executions: number } | null }[] }) =>
      body.skills.map((skill) => [skill.version, skill.stats?.executions ?? 0]);
    expect(executions(all.body)).toEqual([
      ["2.0.0", 1],
      ["1.0.0", 3],
    ]);
    expect(lastTwo.body.statsWindow.executions).toBe(2);
    expect(executions(lastTwo.body)).toEqual([
      ["2.0.0", 1],
      ["1.0.0", 1],
    ]);
    expect(none.body.statsWindow.since).toBe(future);
    expect(none.body.skills[0].stats).toBeNull();
  });

  it("leaves stats out unless asked, and refuses a bad window naming the parameter", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());

    const plain = await api.call("GET", "/api/skills");
    const badWindow = await api.call("GET", "/api/skills?stats=1&statsWindow=0");
    const badSince = await api.call("GET", "/api/skills?stats=1&statsSince=soon");
    const typo = await api.call("GET", "/api/skills?stat=1");

    expect(plain.body.skills[0]).not.toHaveProperty("stats");
    expect(plain.body).not.toHaveProperty("statsWindow");
    for (const refused of [badWindow, badSince, typo]) {
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe("REQUEST_INVALID");
    }
    expect(badWindow.body.error.message).toContain("statsWindow");
    expect(badSince.body.error.message).toContain("statsSince");
  });

  it("says where a skill comes from: registered by code or the API is `api`", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());

    const { body } = await api.call("GET", "/api/skills");

    expect(body.skills[0].origin).toEqual({ kind: "api", package: null });
    expect(body.skills[0].lastLoadError).toBeNull();
  });
});
