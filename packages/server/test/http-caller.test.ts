import { describe, expect, it } from "vitest";
import { echoSkill, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();

describe("createHttpApp: GET /api/caller", () => {
  it("answers `public` without API keys, an approver from this machine", async () => {
    const api = await startApi();

    const { status, body } = await api.call("GET", "/api/caller");

    expect(status).toBe(200);
    expect(body).toEqual({ owner: "public", approver: true, apiKeysConfigured: false });
  });

  it("answers the key's owner and whether it may approve, and 401 for a missing or unknown key", async () => {
    const api = await startApi({ apiKeys: { "alice-key": "alice", "carol-key": "carol+approver" } });

    const alice = await api.call("GET", "/api/caller", { key: "alice-key" });
    const carol = await api.call("GET", "/api/caller", { key: "carol-key" });
    const missing = await api.call("GET", "/api/caller");
    const wrong = await api.call("GET", "/api/caller", { key: "guess" });

    expect(alice.body).toEqual({ owner: "alice", approver: false, apiKeysConfigured: true });
    expect(carol.body).toEqual({ owner: "carol", approver: true, apiKeysConfigured: true });
    expect(missing.status).toBe(401);
    expect(missing.body.error.code).toBe("AUTH_REQUIRED");
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe("AUTH_INVALID");
  });

  it("refuses a query parameter, naming it", async () => {
    const api = await startApi();

    const { status, body } = await api.call("GET", "/api/caller?owner=bob");

    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: "REQUEST_INVALID" });
    expect(body.error.message).toMatch(/unknown field `owner`/);
  });
});

describe("createHttpApp: examples on skill views", () => {
  it("shows the manifest's examples on every view of a skill, and [] when it has none", async () => {
    const api = await startApi();
    const examples = [
      { description: "says hello", input: { msg: "hello" }, output: { echoed: "hello" } },
      { input: { msg: "" } },
    ];
    const withExamples = api.host.registry.register(echoSkill({ examples }));
    api.host.registry.register(echoSkill({ name: "plain" }));

    const latest = await api.call("GET", "/api/skills");
    const all = await api.call("GET", "/api/skills?versions=all");
    const versions = await api.call("GET", "/api/skills/echo");
    const patched = await api.call("PATCH", `/api/skills/${withExamples.id}`, { json: { enabled: false } });

    const byName = (body: { skills: Array<{ name: string; examples: unknown }> }) =>
      Object.fromEntries(body.skills.map((skill) => [skill.name, skill.examples]));
    expect(byName(latest.body)).toEqual({ echo: examples, plain: [] });
    expect(byName(all.body)).toEqual({ echo: examples, plain: [] });
    expect(versions.body.skills[0].examples).toEqual(examples);
    expect(patched.body.examples).toEqual(examples);
  });
});
