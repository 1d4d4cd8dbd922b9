import { SKILL_NAME_PATTERN } from "@skillbox/core";
import { formatZodIssues, retryPolicySchema, sandboxSettingsSchema } from "@skillbox/core/internal";
import { describe, expect, it } from "vitest";
import { skillRegistrationSchema } from "../src/schemas.js";

describe("SKILL_NAME_PATTERN", () => {
  it.each([
    "echo",
    "Echo2",
    "fetch_url",
    "tools.fetch-url",
    "@acme/weather",
    "@acme-co/weather.v2",
    "9lives",
  ])("accepts %s", (name) => {
    expect(SKILL_NAME_PATTERN.test(name)).toBe(true);
  });

  it.each([
    "",
    "has space",
    "echo@1.0.0",
    "-leading-dash",
    ".hidden",
    "@acme",
    "@Acme/weather",
    "acme/weather",
    "@acme/",
    "a/b/c",
  ])("rejects %j", (name) => {
    expect(SKILL_NAME_PATTERN.test(name)).toBe(false);
  });
});

describe("skillRegistrationSchema", () => {
  it("fills in defaults for a minimal registration", () => {
    const parsed = skillRegistrationSchema.parse({ name: "echo", version: "1.0.0", handler: "echoHandler" });

    expect(parsed).toEqual({
      name: "echo",
      version: "1.0.0",
      handler: "echoHandler",
      description: "",
      runtime: "inline",
      tags: [],
      enabled: true,
      apiKeyId: "system",
      source: "api",
    });
  });

  it("accepts the reference's register() payload unchanged", () => {
    const registration = {
      name: "echo",
      version: "1.0.0",
      description: "Returns the same payload back",
      schema: { input: { type: "object", properties: { msg: { type: "string" } } } },
      handler: "echoHandler",
      enabled: true,
      apiKeyId: "public",
    };

    expect(skillRegistrationSchema.safeParse(registration).success).toBe(true);
  });

  it("accepts prerelease and build versions and rejects partial ones", () => {
    const base = { name: "echo", handler: "h" };

    for (const version of ["0.0.1", "1.0.0-beta.1", "2.0.0-rc.1+build.5", "v1.2.3"]) {
      expect(skillRegistrationSchema.safeParse({ ...base, version }).success).toBe(true);
    }
    for (const version of ["1", "1.0", "1.0.0.0", "^1.0.0", "latest", ""]) {
      expect(skillRegistrationSchema.safeParse({ ...base, version }).success).toBe(false);
    }
  });

  it("checks every requires entry as a semver range", () => {
    const result = skillRegistrationSchema.safeParse({
      name: "echo",
      version: "1.0.0",
      handler: "h",
      requires: { good: "^1.0.0", alsoGood: "1.x || >=3.0.0", bad: "one point oh" },
    });

    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join("."))).toEqual(["requires.bad"]);
  });

  it("keeps unknown sandbox keys for runtimes that understand them", () => {
    const parsed = sandboxSettingsSchema.parse({ image: "alpine", cpus: 0.5, readOnlyRoot: true });

    expect(parsed).toEqual({ image: "alpine", cpus: 0.5, readOnlyRoot: true });
  });
});

describe("sandboxSettingsSchema", () => {
  it("requires an image for a command, naming `image`", () => {
    const parsed = sandboxSettingsSchema.safeParse({ command: ["node", "run.js"] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({
      path: ["image"],
      message: expect.stringContaining("sandbox.command"),
    });
    expect(sandboxSettingsSchema.safeParse({ command: ["node"], image: "alpine" }).success).toBe(true);
    // A handler skill needs neither: Skillbox's runner and default image run it.
    expect(sandboxSettingsSchema.safeParse({ memoryMb: 64 }).success).toBe(true);
  });
});

describe("retryPolicySchema", () => {
  it("accepts a partial policy", () => {
    expect(retryPolicySchema.parse({ maxAttempts: 3 })).toEqual({ maxAttempts: 3 });
    expect(retryPolicySchema.parse({})).toEqual({});
  });

  it.each<[string, Record<string, unknown>]>([
    ["zero attempts", { maxAttempts: 0 }],
    ["fractional attempts", { maxAttempts: 1.5 }],
    ["more than 100 attempts", { maxAttempts: 101 }],
    ["a negative delay", { initialDelayMs: -1 }],
    ["a shrinking backoff", { backoffCoefficient: 0.9 }],
    ["jitter above 1", { jitter: 1.1 }],
    ["an unknown key", { retries: 3 }],
  ])("rejects %s", (_label, policy) => {
    expect(retryPolicySchema.safeParse(policy).success).toBe(false);
  });
});

describe("formatZodIssues", () => {
  it("writes one line per issue, naming the field in backticks", () => {
    const result = skillRegistrationSchema.safeParse({ name: "echo", version: "1.0", retry: { jitter: 5 } });
    expect(result.success).toBe(false);

    const lines = formatZodIssues(result.error!, "skills/echo/skill.json").split("\n");

    expect(lines).toHaveLength(3);
    expect(lines).toContain(
      'skills/echo/skill.json: `version` must be a semver version such as "1.0.0", got "1.0"',
    );
    expect(lines.some((line) => line.startsWith("skills/echo/skill.json: `handler` "))).toBe(true);
    expect(lines.some((line) => line.startsWith("skills/echo/skill.json: `retry.jitter` "))).toBe(true);
  });

  it('calls an issue without a path "value"', () => {
    const result = skillRegistrationSchema.safeParse("not an object");

    expect(formatZodIssues(result.error!, "register()")).toMatch(/^register\(\): value /);
  });
});
