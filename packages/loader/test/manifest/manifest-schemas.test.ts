import { interceptorManifestSchema, skillManifestSchema } from "@skillbox/loader";
import { describe, expect, it } from "vitest";

const minimalSkill = { name: "echo", version: "1.0.0", handler: "./index.ts" };

function issuePaths(result: {
  success: boolean;
  error?: { issues: { path: PropertyKey[]; code: string }[] };
}) {
  return (result.error?.issues ?? []).map((issue) => `${issue.code}:${issue.path.join(".")}`);
}

describe("skillManifestSchema", () => {
  it("accepts a minimal manifest: name, version and handler", () => {
    expect(skillManifestSchema.parse(minimalSkill)).toEqual(minimalSkill);
  });

  it('accepts an optional `kind: "skill"` and scoped names', () => {
    expect(
      skillManifestSchema.safeParse({ ...minimalSkill, kind: "skill", name: "@acme/weather" }).success,
    ).toBe(true);
  });

  it("accepts full semver versions, prereleases and build metadata included", () => {
    for (const version of ["0.0.1", "1.2.3-beta.1", "2.0.0+build.7"]) {
      expect(skillManifestSchema.safeParse({ ...minimalSkill, version }).success, version).toBe(true);
    }
  });

  it.each(["1", "1.0", "v1.0.0x", "latest", ""])("rejects the version %j", (version) => {
    expect(issuePaths(skillManifestSchema.safeParse({ ...minimalSkill, version }))).toEqual([
      "custom:version",
    ]);
  });

  it("rejects unknown fields instead of ignoring them", () => {
    const result = skillManifestSchema.safeParse({ ...minimalSkill, timeout: 100, tag: "x" });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({ code: "unrecognized_keys", keys: ["timeout", "tag"] });
  });

  it("rejects requires ranges that are not semver ranges", () => {
    expect(
      issuePaths(skillManifestSchema.safeParse({ ...minimalSkill, requires: { a: "^1", b: "one" } })),
    ).toEqual(["custom:requires.b"]);
  });

  it("rejects an empty handler path and a non-positive timeout", () => {
    expect(
      issuePaths(skillManifestSchema.safeParse({ ...minimalSkill, handler: "", timeoutMs: 0 })).sort(),
    ).toEqual(["too_small:handler", "too_small:timeoutMs"]);
  });

  it("rejects the interceptor kind", () => {
    expect(skillManifestSchema.safeParse({ ...minimalSkill, kind: "interceptor" }).success).toBe(false);
  });
});

describe("interceptorManifestSchema", () => {
  it("accepts a name and a handler, with an optional version", () => {
    expect(interceptorManifestSchema.safeParse({ name: "audit", handler: "./index.ts" }).success).toBe(true);
    expect(
      interceptorManifestSchema.safeParse({ name: "audit", version: "1.0.0", handler: "./i.ts" }).success,
    ).toBe(true);
  });

  it("accepts match by a name pattern or a list, and by tags", () => {
    for (const match of [{ names: "github.*" }, { names: ["a", "b"] }, { tags: ["risky"] }]) {
      expect(interceptorManifestSchema.safeParse({ name: "x", handler: "./i.ts", match }).success).toBe(true);
    }
  });

  it("rejects skill-only fields", () => {
    const result = interceptorManifestSchema.safeParse({ name: "x", handler: "./i.ts", input: {} });
    expect(result.error?.issues[0]).toMatchObject({ code: "unrecognized_keys", keys: ["input"] });
  });

  it("rejects a non-numeric order and non-object options", () => {
    expect(
      issuePaths(
        interceptorManifestSchema.safeParse({ name: "x", handler: "./i.ts", order: "1", options: [] }),
      ).sort(),
    ).toEqual(["invalid_type:options", "invalid_type:order"]);
  });
});
