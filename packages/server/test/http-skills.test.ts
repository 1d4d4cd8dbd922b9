import { describe, expect, it } from "vitest";
import { echoSkill, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();
const KEYS = { "alice-key": "alice", "bob-key": "bob" };

describe("createHttpApp: GET /api/skills", () => {
  it("lists the caller's own skills plus the global ones, never another owner's", async () => {
    const api = await startApi({ apiKeys: KEYS });
    api.host.registry.register(echoSkill());
    api.host.registry.register(echoSkill({ name: "clock", apiKeyId: "system" }));
    api.host.registry.register(echoSkill({ name: "alice-notes", apiKeyId: "alice" }));
    api.host.registry.register(echoSkill({ name: "bob-notes", apiKeyId: "bob" }));

    const alice = await api.call("GET", "/api/skills", { key: "alice-key" });
    const bob = await api.call("GET", "/api/skills", { key: "bob-key" });

    expect(alice.status).toBe(200);
    expect(alice.body.skills.map((skill: { name: string }) => skill.name)).toEqual([
      "alice-notes",
      "clock",
      "echo",
    ]);
    expect(bob.body.skills.map((skill: { name: string }) => skill.name)).toEqual([
      "bob-notes",
      "clock",
      "echo",
    ]);
  });

  it("shows each name once, at the version a bare name runs, with every visible version", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill({ version: "1.0.0" }));
    api.host.registry.register(echoSkill({ version: "1.1.0" }));
    api.host.registry.register(echoSkill({ version: "2.0.0-beta.1" }));

    const { status, body } = await api.call("GET", "/api/skills");

    expect(status).toBe(200);
    expect(body.skills).toHaveLength(1);
    const [echo] = body.skills;
    expect(echo).toMatchObject({
      name: "echo",
      version: "1.1.0",
      versions: ["2.0.0-beta.1", "1.1.0", "1.0.0"],
      description: "Returns the message",
      owner: "public",
      runtime: "inline",
      tags: ["demo"],
      enabled: true,
      timeoutMs: null,
      inputSchema: { type: "object", required: ["msg"] },
      outputSchema: { type: "object" },
    });
    expect(echo.id).toMatch(/^[0-9a-f-]{36}$/);
    // Loader internals describe the server's disk, not the skill.
    expect(echo).not.toHaveProperty("handler");
    expect(echo).not.toHaveProperty("source");
  });

  it("lists every version with ?versions=all", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill({ version: "1.0.0" }));
    api.host.registry.register(echoSkill({ version: "1.1.0" }));

    const { body } = await api.call("GET", "/api/skills?versions=all");

    expect(body.skills.map((skill: { version: string }) => skill.version)).toEqual(["1.1.0", "1.0.0"]);
  });

  it("refuses an unknown query parameter or value, naming it (400)", async () => {
    const api = await startApi();
    const badValue = await api.call("GET", "/api/skills?versions=some");
    const unknown = await api.call("GET", "/api/skills?verisons=all");

    expect(badValue.status).toBe(400);
    expect(badValue.body.error.code).toBe("REQUEST_INVALID");
    expect(badValue.body.error.message).toContain("`versions`");
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain("`verisons`");
  });
});

describe("createHttpApp: GET /api/skills/:name", () => {
  it("returns every visible version of the name, the caller's own shadowing a global one", async () => {
    const api = await startApi({ apiKeys: KEYS });
    api.host.registry.register(echoSkill({ version: "1.0.0" }));
    api.host.registry.register(echoSkill({ version: "2.0.0" }));
    api.host.registry.register(echoSkill({ version: "2.0.0", apiKeyId: "alice", description: "Alice's" }));

    const alice = await api.call("GET", "/api/skills/echo", { key: "alice-key" });
    const bob = await api.call("GET", "/api/skills/echo", { key: "bob-key" });

    expect(alice.status).toBe(200);
    expect(alice.body.name).toBe("echo");
    expect(
      alice.body.skills.map((skill: { version: string; owner: string }) => `${skill.version}/${skill.owner}`),
    ).toEqual(["2.0.0/alice", "1.0.0/public"]);
    expect(bob.body.skills.map((skill: { owner: string }) => skill.owner)).toEqual(["public", "public"]);
  });

  it("is 404 SKILL_NOT_FOUND for a name the caller cannot see", async () => {
    const api = await startApi({ apiKeys: KEYS });
    api.host.registry.register(echoSkill({ name: "alice-notes", apiKeyId: "alice" }));

    const missing = await api.call("GET", "/api/skills/nothing", { key: "alice-key" });
    const foreign = await api.call("GET", "/api/skills/alice-notes", { key: "bob-key" });

    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("SKILL_NOT_FOUND");
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("SKILL_NOT_FOUND");
  });

  it("serves scoped names both URL-encoded and as two path segments", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill({ name: "@acme/weather" }));

    const encoded = await api.call("GET", "/api/skills/%40acme%2Fweather");
    const segments = await api.call("GET", "/api/skills/@acme/weather");
    const slashOnly = await api.call("GET", "/api/skills/@acme%2Fweather");

    for (const response of [encoded, segments, slashOnly]) {
      expect(response.status).toBe(200);
      expect(response.body.name).toBe("@acme/weather");
      expect(response.body.skills[0].name).toBe("@acme/weather");
    }
  });

  it("answers other multi-segment paths under /api/skills with 404 NOT_FOUND", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill({ name: "@acme/weather" }));

    const unscoped = await api.call("GET", "/api/skills/acme/weather");
    const tooDeep = await api.call("GET", "/api/skills/@acme/weather/extra");
    const postWithoutExecute = await api.call("POST", "/api/skills/@acme/weather", { json: {} });

    for (const response of [unscoped, tooDeep, postWithoutExecute]) {
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe("NOT_FOUND");
    }
  });
});

describe("createHttpApp: PATCH /api/skills/:id", () => {
  it("lets an owner disable and re-enable its own skill", async () => {
    const api = await startApi({ apiKeys: KEYS });
    const skill = api.host.registry.register(echoSkill({ apiKeyId: "alice" }));

    const disabled = await api.call("PATCH", `/api/skills/${skill.id}`, {
      key: "alice-key",
      json: { enabled: false },
    });
    const run = await api.call("POST", "/api/skills/echo/execute", {
      key: "alice-key",
      json: { input: { msg: "x" } },
    });
    const enabled = await api.call("PATCH", `/api/skills/${skill.id}`, {
      key: "alice-key",
      json: { enabled: true },
    });

    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ id: skill.id, enabled: false, owner: "alice" });
    expect(run.status).toBe(409);
    expect(run.body.error.code).toBe("SKILL_DISABLED");
    expect(enabled.body.enabled).toBe(true);
    expect(api.host.registry.getSkill(skill.id)?.enabled).toBe(true);
  });

  it("is 403 for a visible skill of another owner and 404 for an invisible one", async () => {
    const api = await startApi({ apiKeys: KEYS });
    const global = api.host.registry.register(echoSkill({ apiKeyId: "system" }));
    const bobs = api.host.registry.register(echoSkill({ name: "bob-notes", apiKeyId: "bob" }));

    const onGlobal = await api.call("PATCH", `/api/skills/${global.id}`, {
      key: "alice-key",
      json: { enabled: false },
    });
    const onBobs = await api.call("PATCH", `/api/skills/${bobs.id}`, {
      key: "alice-key",
      json: { enabled: false },
    });

    expect(onGlobal.status).toBe(403);
    expect(onGlobal.body.error.code).toBe("FORBIDDEN");
    expect(onGlobal.body.error.message).toContain('owner "system"');
    expect(onBobs.status).toBe(404);
    expect(onBobs.body.error.code).toBe("SKILL_NOT_FOUND");
    expect(api.host.registry.getSkill(global.id)?.enabled).toBe(true);
    expect(api.host.registry.getSkill(bobs.id)?.enabled).toBe(true);
  });

  it("without API keys lets the anonymous caller change only public skills", async () => {
    const api = await startApi();
    const publicSkill = api.host.registry.register(echoSkill({ apiKeyId: "public" }));
    const systemSkill = api.host.registry.register(echoSkill({ name: "loaded", apiKeyId: "system" }));

    const onPublic = await api.call("PATCH", `/api/skills/${publicSkill.id}`, { json: { enabled: false } });
    const onSystem = await api.call("PATCH", `/api/skills/${systemSkill.id}`, { json: { enabled: false } });

    expect(onPublic.status).toBe(200);
    expect(onSystem.status).toBe(403);
  });

  it("validates the id and the body, naming the field (400)", async () => {
    const api = await startApi();
    const skill = api.host.registry.register(echoSkill());

    const byName = await api.call("PATCH", "/api/skills/echo", { json: { enabled: false } });
    const wrongType = await api.call("PATCH", `/api/skills/${skill.id}`, { json: { enabled: "no" } });
    const extra = await api.call("PATCH", `/api/skills/${skill.id}`, {
      json: { enabled: true, version: "2.0.0" },
    });

    expect(byName.status).toBe(400);
    expect(byName.body.error.message).toContain("skill id");
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.message).toContain("`enabled` must be true or false");
    expect(extra.status).toBe(400);
    expect(extra.body.error.message).toContain("`version`");
  });
});

describe("createHttpApp: DELETE /api/skills/:id", () => {
  it("removes the caller's own skill (204) and refuses a global one (403)", async () => {
    const api = await startApi({ apiKeys: KEYS });
    const own = api.host.registry.register(echoSkill({ name: "alice-notes", apiKeyId: "alice" }));
    const global = api.host.registry.register(echoSkill());

    const deleted = await api.call("DELETE", `/api/skills/${own.id}`, { key: "alice-key" });
    const again = await api.call("DELETE", `/api/skills/${own.id}`, { key: "alice-key" });
    const refused = await api.call("DELETE", `/api/skills/${global.id}`, { key: "alice-key" });

    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeNull();
    expect(api.host.registry.getSkill(own.id)).toBeUndefined();
    expect(again.status).toBe(404);
    expect(refused.status).toBe(403);
    expect(api.host.registry.getSkill(global.id)).toBeDefined();
  });
});
