import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  createSkillHost,
  isSkillboxError,
  type RegistryChange,
  type SkillboxError,
  type SkillHost,
  type SkillRegistration,
} from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

let host: TemporaryHost;
const extraHosts: SkillHost[] = [];

beforeEach(() => {
  host = createTemporaryHost();
});

afterEach(async () => {
  for (const extra of extraHosts.splice(0)) await extra.close();
  await host.dispose();
});

/** A skill as the loader registers one: its code in a package folder, with examples. */
function loadedSkill(overrides: Partial<SkillRegistration> = {}): SkillRegistration {
  // Nothing reads these files: the registry stores where the code is, it does not load it.
  const root = join("/", "plugins", "echo");
  return {
    name: "echo",
    version: "1.0.0",
    handler: pathToFileURL(join(root, "index.mjs")).href,
    runtime: "worker",
    source: root,
    code: { modulePath: join(root, "index.mjs"), codeHash: "hash-1", root },
    examples: [
      { description: "says hello", input: { msg: "hello" }, output: { echoed: "hello" } },
      { input: { msg: "no expected output" } },
    ],
    ...overrides,
  };
}

function skillsRevision(): number {
  return host.database
    .prepare("SELECT value FROM skillbox_meta WHERE key = 'skills_revision'")
    .pluck()
    .get() as number;
}

function recordChanges(): RegistryChange[] {
  const changes: RegistryChange[] = [];
  host.registry.on("change", (change) => changes.push(change));
  return changes;
}

function registrationError(registration: unknown): SkillboxError {
  try {
    host.registry.register(registration as SkillRegistration);
  } catch (error) {
    expect(isSkillboxError(error)).toBe(true);
    return error as SkillboxError;
  }
  return expect.unreachable("register() accepted an invalid registration");
}

describe("Skill.code and Skill.examples", () => {
  it("keeps both through SQLite, as columns of their own, for another connection", () => {
    const registration = loadedSkill();
    const stored = host.registry.register(registration);

    expect(stored.code).toEqual(registration.code);
    expect(stored.examples).toEqual(registration.examples);
    const second = createSkillHost({
      database: host.databasePath,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    extraHosts.push(second);
    expect(second.registry.getSkill(stored.id)).toEqual(stored);
    const row = host.database
      .prepare<[string], { code: string; examples: string; metadata: string | null }>(
        "SELECT code, examples, metadata FROM skills WHERE id = ?",
      )
      .get(stored.id)!;
    expect(JSON.parse(row.code)).toEqual(registration.code);
    expect(JSON.parse(row.examples)).toEqual(registration.examples);
    expect(row.metadata).toBeNull();
  });

  it("leaves both out for a skill registered without them", () => {
    const stored = host.registry.register({ name: "x", version: "1.0.0", handler: "x-handler" });

    expect(stored.code).toBeUndefined();
    expect(stored.examples).toBeUndefined();
    host.registry.invalidateCache();
    expect(host.registry.getSkill(stored.id)?.code).toBeUndefined();
    // The hash the previous version stored for this definition: upgrading rewrites no such skill.
    expect(stored.contentHash).toBe("2de4ac8d5ad34f355c8e7dd5eb8b932eb6fe92bde849e5d0052799d92dcdfab4");
  });

  it("writes nothing when the same code and examples are registered again", () => {
    const first = host.registry.register(loadedSkill());
    const revision = skillsRevision();
    const changes = recordChanges();

    const again = host.registry.register(loadedSkill());

    expect(again).toEqual(first);
    expect(changes).toEqual([]);
    expect(skillsRevision()).toBe(revision);
  });

  it.each<[string, Partial<SkillRegistration>]>([
    ["a new code hash", { code: { ...loadedSkill().code!, codeHash: "hash-2" } }],
    ["a snapshot module path", { code: { ...loadedSkill().code!, modulePath: "/snapshots/echo/index.mjs" } }],
    ["a bundle root", { code: { ...loadedSkill().code!, root: "/plugins" } }],
    ["no code", { code: undefined }],
    ["another example", { examples: [{ input: { msg: "other" } }] }],
    ["no examples", { examples: undefined }],
  ])("rewrites the skill in place for %s", (_label, overrides) => {
    const first = host.registry.register(loadedSkill());
    const changes = recordChanges();

    const second = host.registry.register(loadedSkill(overrides));

    expect(second.id).toBe(first.id);
    expect(second.contentHash).not.toBe(first.contentHash);
    expect(second.code).toEqual("code" in overrides ? overrides.code : first.code);
    expect(second.examples).toEqual("examples" in overrides ? overrides.examples : first.examples);
    expect(changes).toEqual([{ origin: "local", kind: "registered", skill: second }]);
    host.registry.invalidateCache();
    expect(host.registry.getSkill(first.id)).toEqual(second);
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      "a relative module path",
      { code: { modulePath: "./index.mjs", codeHash: "h", root: "/plugins/echo" } },
      '`code.modulePath` must be an absolute path of the handler module, got "./index.mjs"',
    ],
    [
      "a missing module path",
      { code: { codeHash: "h", root: "/plugins/echo" } },
      "`code.modulePath` must be the absolute path of the handler module",
    ],
    [
      "an empty code hash",
      { code: { modulePath: "/plugins/echo/index.mjs", codeHash: "", root: "/plugins/echo" } },
      "`code.codeHash` must be a non-empty hash of the package's files",
    ],
    [
      "a relative root",
      { code: { modulePath: "/plugins/echo/index.mjs", codeHash: "h", root: "echo" } },
      '`code.root` must be an absolute path of the folder the code may reach, got "echo"',
    ],
    [
      "an unknown code field",
      { code: { modulePath: "/plugins/echo/index.mjs", codeHash: "h", root: "/plugins", handlerPath: "/x" } },
      "unknown field `code.handlerPath`",
    ],
    ["examples that are not a list", { examples: { input: 1 } }, "`examples`"],
    [
      "an unknown example field",
      { examples: [{ input: 1, expected: 2 }] },
      "unknown field `examples.0.expected`",
    ],
    [
      "a non-string example description",
      { examples: [{ input: 1, description: 3 }] },
      "`examples.0.description`",
    ],
  ])("rejects %s with REGISTRATION_INVALID naming the field", (_label, overrides, expected) => {
    const revision = skillsRevision();

    const error = registrationError({ ...loadedSkill(), ...overrides });

    expect(error.code).toBe("REGISTRATION_INVALID");
    expect(error.message).toContain(expected);
    expect(host.registry.list()).toEqual([]);
    expect(skillsRevision()).toBe(revision);
  });
});
