import type { RuntimeDescription, SkillRuntime } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { useTestApi } from "./http-test-api.js";

const startApi = useTestApi();
const KEYS = { "alice-key": "alice", "bob-key": "bob" };

/**
 * A runtime of the kind a package adds, with a pool per skill version (as the container
 * runtime's warm pools): it runs handlers on the caller's thread and counts, per skill, the
 * executions it has run.
 */
function countingRuntime(): SkillRuntime {
  const runs = new Map<string, { label: string; count: number }>();
  return {
    name: "counting",
    async run(request) {
      const entry = runs.get(request.skill.id) ?? {
        label: `${request.skill.name}@${request.skill.version}`,
        count: 0,
      };
      entry.count++;
      runs.set(request.skill.id, entry);
      const handler = await request.resolveHandler();
      return handler(request.input, request.context);
    },
    describe(): RuntimeDescription {
      return {
        details: { engine: "counting", limit: null },
        pools: [...runs].map(([skillId, entry]) => ({
          name: entry.label,
          skillId,
          size: entry.count,
          idle: entry.count,
          busy: 0,
          max: 4,
        })),
      };
    },
  };
}

describe("createHttpApp: GET /api/sandbox", () => {
  it("lists every runtime with its details and pools, the inline and worker ones included", async () => {
    const api = await startApi({}, { worker: { maxThreads: 3 } });

    const { status, body } = await api.call("GET", "/api/sandbox");

    expect(status).toBe(200);
    expect(body).toEqual({
      runtimes: [
        { name: "inline", details: { isolation: "none" }, pools: [] },
        {
          name: "worker",
          details: {
            isolation: "worker thread",
            maxThreads: 3,
            minThreads: 0,
            idleTimeoutMs: 30_000,
            maxQueue: 1000,
            maxConcurrencyPerSkill: null,
            threads: 0,
            queued: 0,
          },
          pools: [],
        },
      ],
    });
  });

  it("shows the pools of skills the caller can see only, without their skill ids", async () => {
    const api = await startApi({ apiKeys: KEYS }, { runtimes: [countingRuntime()] });
    api.host.executor.registerHandler("noop", () => ({}));
    const input = { type: "object" };
    api.host.registry.registerMany([
      { name: "shared", version: "1.0.0", handler: "noop", runtime: "counting", apiKeyId: "public", input },
      { name: "mine", version: "1.0.0", handler: "noop", runtime: "counting", apiKeyId: "alice", input },
    ]);
    await api.call("POST", "/api/skills/shared/execute", { key: "bob-key", json: { input: {} } });
    await api.call("POST", "/api/skills/mine/execute", { key: "alice-key", json: { input: {} } });

    const alice = await api.call("GET", "/api/sandbox", { key: "alice-key" });
    const bob = await api.call("GET", "/api/sandbox", { key: "bob-key" });
    const anonymous = await api.call("GET", "/api/sandbox");

    const counting = (body: { runtimes: Array<{ name: string }> }) =>
      body.runtimes.find((runtime) => runtime.name === "counting");
    expect(counting(alice.body)).toEqual({
      name: "counting",
      details: { engine: "counting", limit: null },
      pools: [
        { name: "shared@1.0.0", size: 1, idle: 1, busy: 0, max: 4 },
        { name: "mine@1.0.0", size: 1, idle: 1, busy: 0, max: 4 },
      ],
    });
    expect(counting(bob.body)).toMatchObject({ pools: [{ name: "shared@1.0.0" }] });
    expect(anonymous.status).toBe(401);
  });

  it("refuses a query parameter, naming it", async () => {
    const api = await startApi();

    const { status, body } = await api.call("GET", "/api/sandbox?owner=alice");

    expect(status).toBe(400);
    expect(body.error.message).toMatch(/unknown field `owner`/);
  });
});
