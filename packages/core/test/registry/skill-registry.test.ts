import {
  createSkillHost,
  GLOBAL_OWNERS,
  isSkillboxError,
  type RegistryChange,
  type Skill,
  type SkillboxError,
  type SkillHost,
  type SkillRegistration,
  type SkillRegistry,
} from "@skillbox/core";
import { isGlobalOwner, parseSkillReference } from "@skillbox/core/internal";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { isVisibleTo } from "../../src/registry/owner-scope.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A minimal valid registration of `x@1.0.0`, with overrides. */
function skill(overrides: Partial<SkillRegistration> = {}): SkillRegistration {
  return { name: "x", version: "1.0.0", handler: "x-handler", ...overrides };
}

/** Records every `change` event of a registry. */
function recordChanges(registry: SkillRegistry): RegistryChange[] {
  const changes: RegistryChange[] = [];
  registry.on("change", (change) => changes.push(change));
  return changes;
}

/** The registry revision counter maintained by the `skills` triggers. */
function skillsRevision(host: SkillHost): number {
  return host.database
    .prepare("SELECT value FROM skillbox_meta WHERE key = 'skills_revision'")
    .pluck()
    .get() as number;
}

function registrationError(registry: SkillRegistry, registration: unknown): SkillboxError {
  try {
    registry.register(registration as SkillRegistration);
  } catch (error) {
    expect(isSkillboxError(error)).toBe(true);
    return error as SkillboxError;
  }
  return expect.unreachable("register() accepted an invalid registration");
}

/**
 * Lets the event loop turn once. The registry checks SQLite's `data_version` once per turn, so a
 * write made through another connection is guaranteed to be visible from the next turn on.
 */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const versionsOf = (skills: readonly Skill[]) => skills.map((entry) => entry.version);
const ownedVersions = (skills: readonly Skill[]) =>
  skills.map((entry) => `${entry.version}:${entry.apiKeyId}`);

let host: TemporaryHost;
let registry: SkillRegistry;
const extraHosts: SkillHost[] = [];

beforeEach(() => {
  host = createTemporaryHost();
  registry = host.registry;
});

afterEach(async () => {
  vi.useRealTimers();
  for (const extra of extraHosts.splice(0)) await extra.close();
  await host.dispose();
});

/** Another host on the same database file (its own connection, as another process would have). */
function openSecondHost(path = host.databasePath): SkillHost {
  const second = createSkillHost({
    database: path,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  extraHosts.push(second);
  return second;
}

describe("SkillRegistry", () => {
  describe("register", () => {
    it("stores a minimal registration with defaults filled in", () => {
      const stored = registry.register(skill());

      expect(stored).toMatchObject({
        name: "x",
        version: "1.0.0",
        description: "",
        apiKeyId: "system",
        schema: { input: {} },
        handler: "x-handler",
        runtime: "inline",
        tags: [],
        enabled: true,
        source: "api",
      });
      expect(stored.id).toMatch(UUID);
      expect(stored.contentHash).toMatch(/^[0-9a-f]{64}$/);
      expect(stored.createdAt).toBe(stored.updatedAt);
      expect(new Date(stored.createdAt).toISOString()).toBe(stored.createdAt);
      expect(registry.getSkill(stored.id)).toEqual(stored);
    });

    it("accepts schemas in the reference shape and in the manifest shape", () => {
      const input = { type: "object", properties: { msg: { type: "string" } } };
      const output = { type: "object", properties: { echoed: { type: "string" } } };

      const referenceShape = registry.register(skill({ name: "a", schema: { input, output } }));
      const manifestShape = registry.register(skill({ name: "b", input, output }));
      const inputOnly = registry.register(skill({ name: "c", schema: { input } }));

      expect(referenceShape.schema).toEqual({ input, output });
      expect(manifestShape.schema).toEqual({ input, output });
      expect(inputOnly.schema).toEqual({ input });
      expect(inputOnly.schema).not.toHaveProperty("output");
    });

    it("keeps every optional field through a round trip to SQLite", () => {
      const registration = skill({
        description: "does x",
        apiKeyId: "user-1",
        runtime: "worker",
        timeoutMs: 1500,
        retry: { maxAttempts: 3, initialDelayMs: 10, backoffCoefficient: 2, maxDelayMs: 100, jitter: 0.1 },
        memoryMb: 128,
        sandbox: { image: "localhost/skillbox-node:latest", memoryMb: 256, cpus: 0.5, network: false },
        requires: { other: "^1.0.0", "@acme/tool": "~2.1.0" },
        tags: ["demo", "x"],
        enabled: false,
        source: "/plugins/x",
        metadata: { loader: "folder", nested: { value: 1 } },
      });

      const stored = registry.register(registration);
      registry.invalidateCache();
      const reloaded = registry.getSkill(stored.id);

      expect(reloaded).toEqual(stored);
      expect(reloaded).toMatchObject({
        description: "does x",
        apiKeyId: "user-1",
        runtime: "worker",
        timeoutMs: 1500,
        retry: registration.retry,
        memoryMb: 128,
        sandbox: registration.sandbox,
        requires: registration.requires,
        tags: ["demo", "x"],
        enabled: false,
        source: "/plugins/x",
        metadata: { loader: "folder", nested: { value: 1 } },
      });
    });

    it("normalises a v-prefixed version to plain semver", () => {
      const stored = registry.register(skill({ version: "v1.2.3" }));

      expect(stored.version).toBe("1.2.3");
      expect(registry.getSkill("x@1.2.3")?.id).toBe(stored.id);
      // Same definition once normalised: no second row.
      expect(registry.register(skill({ version: "1.2.3" })).id).toBe(stored.id);
      expect(registry.getSkillVersions("x")).toHaveLength(1);
    });

    it("accepts scoped and dotted names", () => {
      registry.register(skill({ name: "@acme/weather", version: "1.0.0" }));
      registry.register(skill({ name: "@acme/weather", version: "1.1.0" }));
      registry.register(skill({ name: "tools.fetch_url-v2" }));

      expect(registry.getSkill("@acme/weather")?.version).toBe("1.1.0");
      expect(registry.getSkill("@acme/weather@~1.0.0")?.version).toBe("1.0.0");
      expect(registry.getSkill("tools.fetch_url-v2@1.0.0")?.name).toBe("tools.fetch_url-v2");
    });

    it.each<[string, Record<string, unknown>, string]>([
      ["a name with a space", { name: "has space" }, "`name`"],
      ["a name containing @", { name: "echo@1.0.0" }, "`name`"],
      ["an empty name", { name: "" }, "`name`"],
      ["a name starting with a dash", { name: "-x" }, "`name`"],
      [
        "a two-part version",
        { version: "1.0" },
        '`version` must be a semver version such as "1.0.0", got "1.0"',
      ],
      ["a range as version", { version: "^1.0.0" }, "`version`"],
      ["a word as version", { version: "latest" }, "`version`"],
      ["a numeric version", { version: 1 }, "`version` must be a string"],
      ["a missing handler", { handler: undefined }, "`handler`"],
      ["an empty handler", { handler: "" }, "`handler` must name a handler"],
      ["retry.maxAttempts below 1", { retry: { maxAttempts: 0 } }, "`retry.maxAttempts`"],
      [
        "retry.backoffCoefficient below 1",
        { retry: { backoffCoefficient: 0.5 } },
        "`retry.backoffCoefficient`",
      ],
      ["retry.jitter above 1", { retry: { jitter: 2 } }, "`retry.jitter`"],
      ["an unknown retry key", { retry: { maxAttempt: 3 } }, "unknown field `retry.maxAttempt`"],
      [
        "a requires entry that is not a range",
        { requires: { other: "not a range" } },
        "`requires.other` must be a semver range",
      ],
      ["a negative timeoutMs", { timeoutMs: -1 }, "`timeoutMs`"],
      ["a fractional timeoutMs", { timeoutMs: 1.5 }, "`timeoutMs`"],
      ["a string enabled flag", { enabled: "yes" }, "`enabled`"],
      ["an empty owner", { apiKeyId: "" }, "`apiKeyId`"],
      ["a non-object input schema", { input: "string" }, "`input` must be a JSON Schema object"],
    ])("rejects %s with REGISTRATION_INVALID naming the field", (_label, overrides, expected) => {
      const changes = recordChanges(registry);
      const revision = skillsRevision(host);

      const error = registrationError(registry, { ...skill(), ...overrides });

      expect(error.code).toBe("REGISTRATION_INVALID");
      expect(error.message).toContain(expected);
      expect(error.retryable).toBe(false);
      expect(Array.isArray(error.data)).toBe(true);
      expect(registry.list()).toEqual([]);
      expect(changes).toEqual([]);
      expect(skillsRevision(host)).toBe(revision);
    });

    it("names the skill being registered in the message", () => {
      const error = registrationError(registry, skill({ version: "1.0" }));

      expect(error.message).toMatch(/^register\("x"\): `version`/);
    });

    it("reports every invalid field, one per line", () => {
      const error = registrationError(registry, { name: "x", version: "1.0", retry: { maxAttempts: 0 } });
      const lines = error.message.split("\n");

      expect(lines).toHaveLength(3);
      expect(error.message).toContain("`version`");
      expect(error.message).toContain("`handler`");
      expect(error.message).toContain("`retry.maxAttempts`");
    });

    it("rejects a registration that is not an object", () => {
      for (const value of [null, undefined, "x@1.0.0", 42]) {
        const error = registrationError(registry, value);
        expect(error.code).toBe("REGISTRATION_INVALID");
        expect(error.message).toContain("register()");
      }
    });

    it("writes nothing when an identical definition is registered again", () => {
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(new Date("2030-01-01T00:00:00.000Z"));
      const first = registry.register(skill({ description: "same", tags: ["a"] }));
      const revision = skillsRevision(host);
      const changes = recordChanges(registry);

      vi.setSystemTime(new Date("2030-01-01T01:00:00.000Z"));
      // Same definition: explicit defaults and a different key order make no difference.
      const again = registry.register({
        tags: ["a"],
        description: "same",
        handler: "x-handler",
        version: "1.0.0",
        name: "x",
        runtime: "inline",
        enabled: true,
        apiKeyId: "system",
        source: "api",
      });

      expect(again).toEqual(first);
      expect(again.updatedAt).toBe("2030-01-01T00:00:00.000Z");
      expect(registry.getSkill(first.id)?.updatedAt).toBe("2030-01-01T00:00:00.000Z");
      expect(changes).toEqual([]);
      expect(skillsRevision(host)).toBe(revision);
    });

    it("updates a changed definition in place, keeping id and createdAt", () => {
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(new Date("2030-01-01T00:00:00.000Z"));
      const first = registry.register(skill({ description: "old" }));
      const changes = recordChanges(registry);

      vi.setSystemTime(new Date("2030-01-01T01:00:00.000Z"));
      const second = registry.register(skill({ description: "new", timeoutMs: 500 }));

      expect(second.id).toBe(first.id);
      expect(second.createdAt).toBe("2030-01-01T00:00:00.000Z");
      expect(second.updatedAt).toBe("2030-01-01T01:00:00.000Z");
      expect(second.contentHash).not.toBe(first.contentHash);
      expect(registry.getSkill("x@1.0.0")).toMatchObject({
        id: first.id,
        description: "new",
        timeoutMs: 500,
      });
      expect(registry.getSkillVersions("x")).toHaveLength(1);
      expect(changes).toEqual([{ origin: "local", kind: "registered", skill: second }]);
    });

    it("keeps the same name@version of different owners as separate skills", () => {
      const global = registry.register(skill({ apiKeyId: "system" }));
      const own = registry.register(skill({ apiKeyId: "user-1" }));

      expect(own.id).not.toBe(global.id);
      expect(registry.list()).toHaveLength(2);
    });
  });

  describe("registerMany", () => {
    it("registers several skills and emits one change per written skill", () => {
      registry.register(skill({ name: "unchanged" }));
      const changes = recordChanges(registry);

      const stored = registry.registerMany([
        skill({ name: "a" }),
        skill({ name: "b", version: "2.0.0" }),
        skill({ name: "unchanged" }),
      ]);

      expect(stored.map((entry) => `${entry.name}@${entry.version}`)).toEqual([
        "a@1.0.0",
        "b@2.0.0",
        "unchanged@1.0.0",
      ]);
      expect(changes.map((change) => `${change.kind}:${change.skill?.name}`)).toEqual([
        "registered:a",
        "registered:b",
      ]);
    });

    it("stores nothing when any registration is invalid", () => {
      expect(() =>
        registry.registerMany([skill({ name: "a" }), skill({ name: "b", version: "1.0" })]),
      ).toThrow(expect.objectContaining({ code: "REGISTRATION_INVALID" }));

      expect(registry.list()).toEqual([]);
    });
  });

  describe("resolveVersion", () => {
    const versions = ["1.9.0", "1.0.0", "2.0.0", "1.2.5", "3.0.0-beta.2", "1.10.0", "1.2.0", "3.0.0-beta.1"];

    beforeEach(() => {
      for (const version of versions) registry.register(skill({ version }));
    });

    it("keeps several versions side by side, highest first", () => {
      expect(versionsOf(registry.getSkillVersions("x"))).toEqual([
        "3.0.0-beta.2",
        "3.0.0-beta.1",
        "2.0.0",
        "1.10.0",
        "1.9.0",
        "1.2.5",
        "1.2.0",
        "1.0.0",
      ]);
      expect(new Set(registry.getSkillVersions("x").map((entry) => entry.id)).size).toBe(versions.length);
    });

    it.each<[string | undefined, string | null]>([
      [undefined, "2.0.0"],
      ["latest", "2.0.0"],
      ["*", "2.0.0"],
      ["1.2.0", "1.2.0"],
      ["=1.2.5", "1.2.5"],
      ["^1.0.0", "1.10.0"],
      ["^1.2.0", "1.10.0"],
      ["~1.2.0", "1.2.5"],
      ["~1.9.0", "1.9.0"],
      [">=1.2.0", "2.0.0"],
      [">1.0.0 <1.10.0", "1.9.0"],
      ["<1.2.0", "1.0.0"],
      ["1.x", "1.10.0"],
      ["1.2.x", "1.2.5"],
      ["1", "1.10.0"],
      ["^1.0.0 || ^2.0.0", "2.0.0"],
      ["1.2.0 || 1.9.0", "1.9.0"],
      ["1.2.0 - 1.9.0", "1.9.0"],
      ["1.0.0 - 1.2.0", "1.2.0"],
      ["^3.0.0-beta.1", "3.0.0-beta.2"],
      [">=3.0.0-beta.1", "3.0.0-beta.2"],
      ["3.0.0-beta.1", "3.0.0-beta.1"],
      ["~3.0.0-beta.0", "3.0.0-beta.2"],
      ["3.x", null],
      [">=2.0.1", null],
      ["^4.0.0", null],
      ["1.3.0", null],
      ["not a range", null],
    ])("resolves range %s to %s", (range, expected) => {
      const resolved = registry.resolveVersion("x", range);

      expect(resolved?.version ?? null).toBe(expected);
      if (resolved) expect(registry.getSkill(resolved.id)).toEqual(resolved);
    });

    it("orders versions numerically, so 1.10.0 beats 1.9.0", () => {
      expect(registry.resolveVersion("x", "^1.9.0")?.version).toBe("1.10.0");
      expect(registry.resolveVersion("x", "1.x")?.version).toBe("1.10.0");
      expect(registry.resolveVersion("x", "<1.10.0")?.version).toBe("1.9.0");
    });

    it("returns null for an unknown name", () => {
      expect(registry.resolveVersion("nope")).toBeNull();
      expect(registry.resolveVersion("nope", "^1.0.0")).toBeNull();
    });

    it("never picks a prerelease for a bare name", () => {
      registry.register(skill({ name: "y", version: "1.0.0-rc.1" }));
      registry.register(skill({ name: "y", version: "1.0.0-rc.2" }));

      expect(registry.getSkill("x")?.version).toBe("2.0.0");
      expect(registry.resolveVersion("y")).toBeNull();
      expect(registry.getSkill("y")).toBeUndefined();
      expect(registry.getSkill("y@^1.0.0-rc.1")?.version).toBe("1.0.0-rc.2");
      expect(registry.getSkill("y@1.0.0-rc.1")?.version).toBe("1.0.0-rc.1");
    });

    it("sees a version registered after a lookup that found nothing", () => {
      expect(registry.resolveVersion("x", "^2.1.0")).toBeNull();

      registry.register(skill({ version: "2.1.0" }));

      expect(registry.resolveVersion("x", "^2.1.0")?.version).toBe("2.1.0");
      expect(registry.resolveVersion("x")?.version).toBe("2.1.0");
    });
  });

  describe("satisfies", () => {
    it.each<[string, string, boolean]>([
      ["1.10.0", "^1.9.0", true],
      ["1.2.5", "~1.2.0", true],
      ["1.3.0", "~1.2.0", false],
      ["2.0.0", "^1.0.0", false],
      ["1.5.0", "1.0.0 - 2.0.0", true],
      ["2.0.1", "1.0.0 - 2.0.0", false],
      ["3.1.0", "^1.0.0 || ^3.0.0", true],
      ["1.4.0", "1.x", true],
      ["2.0.0-beta.1", ">=1.0.0", false],
      ["2.0.0-beta.2", "^2.0.0-beta.1", true],
      ["1.0.0", "not a range", false],
    ])("satisfies(%s, %s) is %s", (version, range, expected) => {
      expect(registry.satisfies(version, range)).toBe(expected);
    });
  });

  describe("compareVersions", () => {
    it("compares by semver precedence, not as strings", () => {
      expect(registry.compareVersions("1.10.0", "1.9.0")).toBeGreaterThan(0);
      expect(registry.compareVersions("1.9.0", "1.10.0")).toBeLessThan(0);
      expect(registry.compareVersions("1.0.0", "1.0.0")).toBe(0);
      expect(registry.compareVersions("2.0.0-beta.1", "2.0.0")).toBeLessThan(0);
      expect(registry.compareVersions("2.0.0-beta.2", "2.0.0-beta.10")).toBeLessThan(0);
      expect(registry.compareVersions("2.0.0-alpha", "2.0.0-beta")).toBeLessThan(0);
    });

    it("sorts versions when used as a comparator", () => {
      const sorted = ["1.10.0", "1.2.0", "2.0.0-rc.1", "1.9.0", "2.0.0"].sort((a, b) =>
        registry.compareVersions(a, b),
      );

      expect(sorted).toEqual(["1.2.0", "1.9.0", "1.10.0", "2.0.0-rc.1", "2.0.0"]);
    });
  });

  describe("owners", () => {
    beforeEach(() => {
      registry.register(skill({ version: "1.0.0", apiKeyId: "system", handler: "system-x" }));
      registry.register(skill({ name: "y", version: "1.0.0", apiKeyId: "public", handler: "public-y" }));
      registry.register(skill({ version: "2.0.0", apiKeyId: "user-1", handler: "user-1-x" }));
      registry.register(skill({ version: "3.0.0", apiKeyId: "user-2", handler: "user-2-x" }));
      registry.register(skill({ name: "z", version: "1.0.0", apiKeyId: "user-1", handler: "user-1-z" }));
    });

    it("shows a caller its own skills plus the system and public ones", () => {
      expect(registry.resolveVersion("x", undefined, "user-1")?.handler).toBe("user-1-x");
      expect(registry.resolveVersion("x", undefined, "user-2")?.handler).toBe("user-2-x");
      expect(registry.resolveVersion("x", undefined, "user-3")?.handler).toBe("system-x");
      expect(registry.resolveVersion("y", undefined, "user-3")?.handler).toBe("public-y");
      expect(registry.resolveVersion("z", undefined, "user-1")?.handler).toBe("user-1-z");
    });

    it("hides other owners' skills", () => {
      expect(registry.resolveVersion("z", undefined, "user-2")).toBeNull();
      expect(registry.resolveVersion("x", "3.0.0", "user-1")).toBeNull();
      expect(registry.getSkill("z", "user-2")).toBeUndefined();
      expect(registry.getSkill("x@3.0.0", "user-1")).toBeUndefined();
      expect(versionsOf(registry.getSkillVersions("x", "user-1"))).toEqual(["2.0.0", "1.0.0"]);
      expect(versionsOf(registry.getSkillVersions("x", "user-3"))).toEqual(["1.0.0"]);
    });

    it("lets a caller's own name@version shadow the global one", () => {
      const own = registry.register(skill({ version: "1.0.0", apiKeyId: "user-1", handler: "user-1-x-v1" }));

      expect(registry.resolveVersion("x", "1.0.0", "user-1")?.id).toBe(own.id);
      expect(registry.getSkill("x@1.0.0", "user-1")?.id).toBe(own.id);
      expect(registry.resolveVersion("x", "1.0.0", "user-2")?.handler).toBe("system-x");
      expect(registry.resolveVersion("x", "1.0.0", "user-3")?.handler).toBe("system-x");
      expect(ownedVersions(registry.getSkillVersions("x", "user-1"))).toEqual([
        "2.0.0:user-1",
        "1.0.0:user-1",
      ]);
    });

    it("prefers public over system when both register the same name@version", () => {
      registry.register(skill({ version: "1.0.0", apiKeyId: "public", handler: "public-x" }));

      expect(registry.resolveVersion("x", "1.0.0", "user-3")?.handler).toBe("public-x");
      expect(ownedVersions(registry.getSkillVersions("x", "user-3"))).toEqual(["1.0.0:public"]);
    });

    it("lists every skill when no owner is given, by name then highest version", () => {
      const listed = registry.list().map((entry) => `${entry.name}@${entry.version}:${entry.apiKeyId}`);

      expect(listed).toEqual([
        "x@3.0.0:user-2",
        "x@2.0.0:user-1",
        "x@1.0.0:system",
        "y@1.0.0:public",
        "z@1.0.0:user-1",
      ]);
    });

    it("lists what an owner can see with the same rules as resolution", () => {
      const listed = registry
        .list("user-1")
        .map((entry) => `${entry.name}@${entry.version}:${entry.apiKeyId}`);

      expect(listed).toEqual(["x@2.0.0:user-1", "x@1.0.0:system", "y@1.0.0:public", "z@1.0.0:user-1"]);
      expect(registry.list("user-3").map((entry) => `${entry.name}@${entry.version}`)).toEqual([
        "x@1.0.0",
        "y@1.0.0",
      ]);
    });

    it("lists a caller's own name@version instead of the global one it shadows", () => {
      registry.register(skill({ version: "1.0.0", apiKeyId: "user-1", handler: "user-1-x-v1" }));

      const listed = registry
        .list("user-1")
        .map((entry) => `${entry.name}@${entry.version}:${entry.apiKeyId}`);

      expect(listed).toEqual(["x@2.0.0:user-1", "x@1.0.0:user-1", "y@1.0.0:public", "z@1.0.0:user-1"]);
      for (const entry of registry.list("user-1")) {
        expect(registry.getSkill(`${entry.name}@${entry.version}`, "user-1")?.id).toBe(entry.id);
      }
    });

    it("hides another owner's skill from getSkill by id", () => {
      const foreign = registry.resolveVersion("z", undefined, "user-1")!;
      const global = registry.resolveVersion("y", undefined, "user-1")!;

      expect(registry.getSkill(foreign.id, "user-1")?.id).toBe(foreign.id);
      expect(registry.getSkill(foreign.id, "user-2")).toBeUndefined();
      expect(registry.getSkill(foreign.id)?.id).toBe(foreign.id);
      expect(registry.getSkill(global.id, "user-2")?.id).toBe(global.id);
    });
  });

  describe("unregister", () => {
    beforeEach(() => {
      registry.register(skill({ version: "1.0.0", apiKeyId: "system" }));
      registry.register(skill({ version: "1.0.0", apiKeyId: "user-1" }));
      registry.register(skill({ version: "2.0.0", apiKeyId: "system" }));
      registry.register(skill({ name: "other", version: "1.0.0" }));
    });

    it("removes every version of every owner when only a name is given", () => {
      const changes = recordChanges(registry);

      expect(registry.unregister("x")).toBe(3);

      expect(registry.getSkillVersions("x")).toEqual([]);
      expect(registry.resolveVersion("x")).toBeNull();
      expect(registry.list().map((entry) => entry.name)).toEqual(["other"]);
      expect(changes).toHaveLength(3);
      for (const change of changes) {
        expect(change).toMatchObject({ origin: "local", kind: "unregistered", skill: { name: "x" } });
      }
      expect(ownedVersions(changes.map((change) => change.skill!)).sort()).toEqual([
        "1.0.0:system",
        "1.0.0:user-1",
        "2.0.0:system",
      ]);
    });

    it("removes one version (of every owner) when a version is given", () => {
      expect(registry.unregister("x", "1.0.0")).toBe(2);

      expect(ownedVersions(registry.getSkillVersions("x"))).toEqual(["2.0.0:system"]);
      expect(registry.resolveVersion("x", "1.0.0", "user-1")).toBeNull();
    });

    it("removes only the given owner's version, uncovering the global one it shadowed", () => {
      expect(registry.resolveVersion("x", "1.0.0", "user-1")?.apiKeyId).toBe("user-1");

      expect(registry.unregister("x", "1.0.0", "user-1")).toBe(1);

      expect(registry.resolveVersion("x", "1.0.0", "user-1")?.apiKeyId).toBe("system");
      expect(ownedVersions(registry.getSkillVersions("x"))).toEqual(["2.0.0:system", "1.0.0:system"]);
    });

    it("returns 0 and changes nothing when nothing matches", () => {
      const changes = recordChanges(registry);
      const revision = skillsRevision(host);

      expect(registry.unregister("missing")).toBe(0);
      expect(registry.unregister("x", "9.9.9")).toBe(0);
      expect(registry.unregister("x", "2.0.0", "user-1")).toBe(0);

      expect(registry.list()).toHaveLength(4);
      expect(changes).toEqual([]);
      expect(skillsRevision(host)).toBe(revision);
    });
  });

  describe("unregisterById", () => {
    it("removes exactly one skill version and reports it", () => {
      const first = registry.register(skill({ version: "1.0.0" }));
      const second = registry.register(skill({ version: "2.0.0" }));
      const changes = recordChanges(registry);

      expect(registry.unregisterById(second.id)).toBe(true);

      expect(registry.getSkill(second.id)).toBeUndefined();
      expect(registry.resolveVersion("x")?.id).toBe(first.id);
      expect(changes).toEqual([{ origin: "local", kind: "unregistered", skill: second }]);
    });

    it("returns false for an unknown id and emits nothing", () => {
      const stored = registry.register(skill());
      const changes = recordChanges(registry);

      expect(registry.unregisterById(stored.id)).toBe(true);
      expect(registry.unregisterById(stored.id)).toBe(false);
      expect(registry.unregisterById("00000000-0000-4000-8000-000000000000")).toBe(false);

      expect(changes).toHaveLength(1);
    });
  });

  describe("setEnabledById", () => {
    let older: Skill;
    let newer: Skill;

    beforeEach(() => {
      older = registry.register(skill({ version: "1.0.0" }));
      newer = registry.register(skill({ version: "2.0.0" }));
    });

    it("disables a version: resolution skips it, getSkill still returns it", () => {
      const changes = recordChanges(registry);

      const disabled = registry.setEnabledById(newer.id, false);

      expect(disabled).toMatchObject({ id: newer.id, version: "2.0.0", enabled: false });
      expect(changes).toEqual([{ origin: "local", kind: "disabled", skill: disabled }]);
      expect(registry.resolveVersion("x")?.id).toBe(older.id);
      expect(registry.resolveVersion("x", "^2.0.0")).toBeNull();
      expect(registry.resolveVersion("x", "^2.0.0", undefined, { includeDisabled: true })?.id).toBe(newer.id);
      expect(registry.resolveVersion("x", undefined, undefined, { includeDisabled: true })?.id).toBe(
        newer.id,
      );
      expect(registry.getSkill("x")).toMatchObject({ id: newer.id, enabled: false });
      expect(registry.getSkill(newer.id)?.enabled).toBe(false);
      expect(registry.getSkillVersions("x").map((entry) => entry.enabled)).toEqual([false, true]);
    });

    it("re-enables a disabled version", () => {
      registry.setEnabledById(newer.id, false);
      expect(registry.resolveVersion("x")?.id).toBe(older.id);
      const changes = recordChanges(registry);

      const enabled = registry.setEnabledById(newer.id, true);

      expect(enabled).toMatchObject({ id: newer.id, enabled: true });
      expect(changes).toEqual([{ origin: "local", kind: "enabled", skill: enabled }]);
      expect(registry.resolveVersion("x")?.id).toBe(newer.id);
    });

    it("keeps the disabled state across hosts", () => {
      registry.setEnabledById(newer.id, false);

      const second = openSecondHost();

      expect(second.registry.getSkill(newer.id)?.enabled).toBe(false);
      expect(second.registry.resolveVersion("x")?.id).toBe(older.id);
    });

    it("returns null for an unknown id and emits nothing", () => {
      const changes = recordChanges(registry);

      expect(registry.setEnabledById("00000000-0000-4000-8000-000000000000", false)).toBeNull();
      expect(changes).toEqual([]);
    });

    it("resolves nothing when every matching version is disabled", () => {
      registry.setEnabledById(older.id, false);
      registry.setEnabledById(newer.id, false);

      expect(registry.resolveVersion("x")).toBeNull();
      expect(registry.resolveVersion("x", "1.0.0")).toBeNull();
      expect(registry.getSkill("x@1.0.0")?.id).toBe(older.id);
    });

    // Regression: the content hash ignored the enabled column, so this re-registration was a no-op.
    it("lets register() re-enable a version that setEnabledById disabled", () => {
      registry.setEnabledById(newer.id, false);

      const again = registry.register(skill({ version: newer.version, enabled: true }));

      expect(again.id).toBe(newer.id);
      expect(again.enabled).toBe(true);
      expect(registry.resolveVersion("x")?.id).toBe(newer.id);
    });
  });

  describe("getSkill", () => {
    it("looks a skill up by id, by name@range and by bare name", () => {
      const older = registry.register(skill({ version: "1.0.0" }));
      const newer = registry.register(skill({ version: "1.1.0" }));

      expect(registry.getSkill(older.id)).toEqual(older);
      expect(registry.getSkill("x@1.0.0")).toEqual(older);
      expect(registry.getSkill("x@^1.0.0")).toEqual(newer);
      expect(registry.getSkill("x@latest")).toEqual(newer);
      expect(registry.getSkill("x")).toEqual(newer);
      expect(registry.getSkill("x@^2.0.0")).toBeUndefined();
      expect(registry.getSkill("missing")).toBeUndefined();
      expect(registry.getSkill("00000000-0000-4000-8000-000000000000")).toBeUndefined();
    });
  });

  describe("change events", () => {
    it("reports each local write with its kind, in order", () => {
      const changes = recordChanges(registry);

      const stored = registry.register(skill());
      registry.register(skill());
      registry.setEnabledById(stored.id, false);
      registry.setEnabledById(stored.id, true);
      registry.register(skill({ description: "changed" }));
      registry.unregisterById(stored.id);

      expect(changes.map((change) => `${change.origin}:${change.kind}`)).toEqual([
        "local:registered",
        "local:disabled",
        "local:enabled",
        "local:registered",
        "local:unregistered",
      ]);
      for (const change of changes) expect(change.skill?.id).toBe(stored.id);
    });
  });

  describe("loadFromDatabase", () => {
    it("lets a second host on the same file see the stored skills", () => {
      const a = registry.register(skill({ version: "1.0.0", description: "first" }));
      const b = registry.register(skill({ name: "y", version: "2.0.0-rc.1", apiKeyId: "user-1" }));

      const second = openSecondHost();

      expect(second.registry.getSkill(a.id)).toEqual(a);
      expect(second.registry.getSkill(b.id)).toEqual(b);
      expect(second.registry.list()).toEqual(registry.list());
      expect(second.registry.resolveVersion("y", "^2.0.0-rc.1", "user-1")?.id).toBe(b.id);
      expect(second.registry.resolveVersion("y", "^2.0.0-rc.1", "user-2")).toBeNull();
    });

    it("keeps skills after the host is closed and the file reopened", async () => {
      const stored = registry.register(skill({ apiKeyId: "user-1", tags: ["kept"] }));
      registry.setEnabledById(stored.id, false);
      const expected = registry.getSkill(stored.id);
      await host.close();

      const reopened = openSecondHost();

      expect(reopened.registry.getSkill(stored.id)).toEqual(expected);
      expect(reopened.registry.getSkill("x@1.0.0", "user-1")?.enabled).toBe(false);
    });

    it("lets a second host on the same file see later writes without invalidateCache", async () => {
      registry.register(skill({ version: "1.0.0" }));
      const second = openSecondHost();
      expect(second.registry.resolveVersion("x")?.version).toBe("1.0.0");
      const changes = recordChanges(second.registry);

      registry.register(skill({ version: "2.0.0" }));
      await nextTurn();

      expect(second.registry.resolveVersion("x")?.version).toBe("2.0.0");
      expect(changes).toEqual([{ origin: "external", kind: "reloaded" }]);
    });

    it("rebuilds the caches from SQLite on demand", () => {
      const stored = registry.register(skill({ description: "before" }));
      expect(registry.getSkill(stored.id)?.description).toBe("before");
      // A write on the registry's own connection that bypassed the registry.
      host.database.prepare("UPDATE skills SET description = 'after' WHERE id = ?").run(stored.id);

      registry.loadFromDatabase();

      expect(registry.getSkill(stored.id)?.description).toBe("after");
      expect(registry.getSkill("x")?.description).toBe("after");
    });
  });

  describe("invalidateCache", () => {
    it("makes the next lookup re-read SQLite", () => {
      const stored = registry.register(skill({ version: "1.0.0" }));
      expect(registry.resolveVersion("x")?.id).toBe(stored.id);
      host.database.prepare("UPDATE skills SET enabled = 0 WHERE id = ?").run(stored.id);

      registry.invalidateCache();

      expect(registry.resolveVersion("x")).toBeNull();
      expect(registry.getSkill(stored.id)?.enabled).toBe(false);
    });
  });

  describe("addServingFilter", () => {
    it("hides the skills it rejects from every lookup of this instance only, until removed", () => {
      const hidden = registry.register(skill({ version: "2.0.0", source: "hidden" }));
      const shown = registry.register(skill({ version: "1.0.0" }));
      const second = openSecondHost();

      const remove = registry.addServingFilter((entry) => entry.source !== "hidden");

      expect(versionsOf(registry.list())).toEqual(["1.0.0"]);
      expect(registry.resolveVersion("x")?.id).toBe(shown.id);
      expect(registry.getSkill(hidden.id)).toBeUndefined();
      expect(registry.getSkill("x@2")).toBeUndefined();
      // Another connection (another process) still sees the row: hiding is not deleting.
      expect(second.registry.resolveVersion("x")?.id).toBe(hidden.id);

      remove();
      expect(registry.resolveVersion("x")?.id).toBe(hidden.id);
    });
  });

  describe("cache coherence on a shared connection", () => {
    it("lets two registries over one database connection see each other's writes", async () => {
      const shared = createSkillHost({
        database: host.database,
        logger: { debug() {}, info() {}, warn() {}, error() {} },
      });
      extraHosts.push(shared);
      registry.register(skill({ version: "1.0.0" }));
      expect(shared.registry.resolveVersion("x")?.version).toBe("1.0.0");

      registry.register(skill({ version: "2.0.0" }));
      await nextTurn();

      expect(shared.registry.resolveVersion("x")?.version).toBe("2.0.0");
    });
  });
});

describe("parseSkillReference", () => {
  it.each<[string, string, string | undefined]>([
    ["echo", "echo", undefined],
    ["echo@1.0.0", "echo", "1.0.0"],
    ["echo@^1.0.0 || ^2.0.0", "echo", "^1.0.0 || ^2.0.0"],
    ["echo@", "echo", undefined],
    ["@acme/weather", "@acme/weather", undefined],
    ["@acme/weather@~1.2.0", "@acme/weather", "~1.2.0"],
    [" echo @ 1.x ", "echo", "1.x"],
  ])("splits %j into name %j and range %j", (reference, name, range) => {
    expect(parseSkillReference(reference)).toEqual({ name, range });
  });

  it("rejects an empty reference with SKILL_REFERENCE_INVALID", () => {
    for (const reference of ["", "   "]) {
      expect(() => parseSkillReference(reference)).toThrow(
        expect.objectContaining({ code: "SKILL_REFERENCE_INVALID" }),
      );
    }
  });
});

describe("isVisibleTo", () => {
  it("treats system and public as global owners", () => {
    expect(GLOBAL_OWNERS).toEqual(["system", "public"]);
    expect(isGlobalOwner("system")).toBe(true);
    expect(isGlobalOwner("public")).toBe(true);
    expect(isGlobalOwner("user-1")).toBe(false);
  });

  it("shows a caller its own and global skills only; everything when no caller is given", () => {
    expect(isVisibleTo("user-1", "user-1")).toBe(true);
    expect(isVisibleTo("system", "user-1")).toBe(true);
    expect(isVisibleTo("public", "user-1")).toBe(true);
    expect(isVisibleTo("user-2", "user-1")).toBe(false);
    expect(isVisibleTo("user-2", undefined)).toBe(true);
  });
});
