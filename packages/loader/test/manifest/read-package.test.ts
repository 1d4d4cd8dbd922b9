import { isSkillboxError, type SkillboxError } from "@skillbox/core";
import { readPackage } from "@skillbox/loader/internal";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MESSAGE_INPUT, replyHandler, skillManifest } from "../loader-fixtures.js";

let tree: TemporaryTree;

beforeEach(() => {
  tree = createTemporaryTree();
});

afterEach(() => {
  tree.cleanup();
});

/** The error `readPackage` rejects with for the folder `relativeRoot`. */
async function readError(relativeRoot: string): Promise<SkillboxError> {
  try {
    await readPackage(tree.path(relativeRoot));
  } catch (error) {
    expect(isSkillboxError(error)).toBe(true);
    return error as SkillboxError;
  }
  return expect.unreachable(`readPackage(${relativeRoot}) accepted an invalid package`);
}

/** A skill folder `pkg/` with `skill.json` = the fixture manifest plus `overrides`. */
function writeSkill(overrides: Record<string, unknown> = {}): void {
  tree.write("pkg/index.ts", replyHandler("hi"));
  tree.write("pkg/skill.json", skillManifest(overrides));
}

describe("readPackage", () => {
  describe("skill.json", () => {
    it("reads a skill manifest with every documented field", async () => {
      tree.write("pkg/index.ts", replyHandler("hi"));
      const manifest = {
        name: "echo",
        version: "1.2.3",
        description: "Returns the same payload back",
        input: MESSAGE_INPUT,
        output: { type: "object", properties: { echoed: { type: "string" } } },
        handler: "./index.ts",
        runtime: "inline",
        timeoutMs: 30_000,
        retry: { maxAttempts: 3, initialDelayMs: 100, backoffCoefficient: 2, maxDelayMs: 5000 },
        sandbox: { image: "localhost/skillbox-node:latest", memoryMb: 256, cpus: 0.5, network: false },
        tags: ["demo"],
        enabled: true,
        requires: { other: "^1.2.0" },
      };
      tree.write("pkg/skill.json", manifest);

      const descriptor = await readPackage(tree.path("pkg"));

      expect(descriptor).toEqual({
        kind: "skill",
        root: tree.path("pkg"),
        manifestFile: tree.path("pkg/skill.json"),
        manifest,
        handlerPath: tree.path("pkg/index.ts"),
      });
    });

    it("returns undefined for a folder that holds no manifest", async () => {
      tree.write("pkg/README.md", "# not a package\n");
      expect(await readPackage(tree.path("pkg"))).toBeUndefined();
      expect(await readPackage(tree.path("missing"))).toBeUndefined();
    });

    it("rejects invalid JSON, naming the file", async () => {
      tree.write("pkg/index.ts", replyHandler("hi"));
      tree.write("pkg/skill.json", '{ "name": "echo", ');
      const error = await readError("pkg");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain(tree.path("pkg/skill.json"));
      expect(error.message).toContain("not valid JSON");
      expect(error.data).toMatchObject({ file: tree.path("pkg/skill.json") });
    });

    it("rejects an unknown field such as the typo `timeout`, naming the file and the field", async () => {
      writeSkill({ timeout: 5000 });
      const error = await readError("pkg");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain(tree.path("pkg/skill.json"));
      expect(error.message).toContain("`timeout`");
      expect(error.message).toMatch(/unknown field/);
      expect(error.data).toMatchObject({ file: tree.path("pkg/skill.json") });
    });

    it("rejects a sandbox command without an image, naming `sandbox.image`", async () => {
      writeSkill({ runtime: "container", sandbox: { command: ["node", "run.js"] } });
      const error = await readError("pkg");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain(tree.path("pkg/skill.json"));
      expect(error.message).toContain("`sandbox.image`");
    });

    it("rejects a version that is not semver, saying what was expected and what it got", async () => {
      writeSkill({ version: "1.0" });
      const error = await readError("pkg");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain(tree.path("pkg/skill.json"));
      expect(error.message).toContain("`version`");
      expect(error.message).toContain("semver");
      expect(error.message).toContain('"1.0"');
    });

    it.each([
      ["name", { name: undefined }, "`name`"],
      ["name", { name: "has spaces" }, "`name`"],
      ["timeoutMs", { timeoutMs: "30s" }, "`timeoutMs`"],
      ["retry", { retry: { maxAttempts: 0 } }, "`retry.maxAttempts`"],
      ["retry", { retry: { attempts: 3 } }, "`retry.attempts`"],
      ["requires", { requires: { other: "not a range" } }, "`requires.other`"],
      ["input", { input: "object" }, "`input`"],
      ["handler", { handler: undefined }, "`handler`"],
      ["enabled", { enabled: "yes" }, "`enabled`"],
      ["tags", { tags: "demo" }, "`tags`"],
    ])("rejects a malformed `%s` field, naming it", async (_field, overrides, named) => {
      writeSkill(overrides);
      const error = await readError("pkg");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain(tree.path("pkg/skill.json"));
      expect(error.message).toContain(named);
    });

    it("rejects a handler file that does not exist, naming the file and the field", async () => {
      tree.write("pkg/skill.json", skillManifest({ handler: "./missing.ts" }));
      const error = await readError("pkg");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain(tree.path("pkg/skill.json"));
      expect(error.message).toContain("`handler`");
      expect(error.message).toContain("./missing.ts");
    });

    it("rejects a folder with both skill.json and interceptor.json", async () => {
      writeSkill();
      tree.write("pkg/interceptor.json", { name: "audit", handler: "./index.ts" });
      const error = await readError("pkg");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain(tree.path("pkg"));
      expect(error.message).toContain("skill.json");
      expect(error.message).toContain("interceptor.json");
    });

    it("prefers skill.json over a package.json with a skillbox field beside it", async () => {
      writeSkill({ name: "from-skill-json" });
      tree.write("pkg/package.json", {
        name: "from-package-json",
        version: "9.9.9",
        skillbox: { handler: "./index.ts" },
      });
      const descriptor = await readPackage(tree.path("pkg"));
      expect(descriptor?.manifest.name).toBe("from-skill-json");
    });
  });

  describe("interceptor.json", () => {
    it("reads an interceptor manifest with order, match and options", async () => {
      tree.write("audit/index.ts", "export default { after() {} };\n");
      const manifest = {
        name: "audit",
        handler: "./index.ts",
        order: -10,
        match: { names: ["github.*"], tags: ["risky"] },
        options: { level: "info" },
      };
      tree.write("audit/interceptor.json", manifest);

      const descriptor = await readPackage(tree.path("audit"));

      expect(descriptor).toEqual({
        kind: "interceptor",
        root: tree.path("audit"),
        manifestFile: tree.path("audit/interceptor.json"),
        manifest,
        handlerPath: tree.path("audit/index.ts"),
      });
    });

    it("rejects a malformed field, naming interceptor.json and the field", async () => {
      tree.write("audit/index.ts", "export default {};\n");
      tree.write("audit/interceptor.json", { name: "audit", handler: "./index.ts", order: "first" });
      const error = await readError("audit");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain(tree.path("audit/interceptor.json"));
      expect(error.message).toContain("`order`");
    });

    it("rejects an unknown field in match", async () => {
      tree.write("audit/index.ts", "export default {};\n");
      tree.write("audit/interceptor.json", { name: "audit", handler: "./index.ts", match: { name: "x" } });
      const error = await readError("audit");
      expect(error.message).toContain("`match.name`");
    });
  });

  describe('package.json "skillbox" field', () => {
    it("takes name, version and description from package.json", async () => {
      tree.write("weather/index.js", "export default (input) => ({ city: input.city });\n");
      tree.write("weather/package.json", {
        name: "@acme/skill-weather",
        version: "2.1.0",
        description: "Weather for a city",
        type: "module",
        skillbox: { input: { type: "object" }, handler: "./index.js", tags: ["weather"], timeoutMs: 5000 },
      });

      const descriptor = await readPackage(tree.path("weather"));

      expect(descriptor).toMatchObject({
        kind: "skill",
        root: tree.path("weather"),
        manifestFile: tree.path("weather/package.json"),
        handlerPath: tree.path("weather/index.js"),
        manifest: {
          name: "@acme/skill-weather",
          version: "2.1.0",
          description: "Weather for a city",
          handler: "./index.js",
          tags: ["weather"],
          timeoutMs: 5000,
        },
      });
    });

    it('reads an interceptor plugin from "skillbox": { "kind": "interceptor" }', async () => {
      tree.write("timing/index.js", "export default { after() {} };\n");
      tree.write("timing/package.json", {
        name: "skillbox-timing",
        version: "1.0.0",
        skillbox: { kind: "interceptor", handler: "./index.js", order: 5, options: { field: "ms" } },
      });

      const descriptor = await readPackage(tree.path("timing"));

      expect(descriptor).toMatchObject({
        kind: "interceptor",
        manifestFile: tree.path("timing/package.json"),
        manifest: { name: "skillbox-timing", version: "1.0.0", order: 5, options: { field: "ms" } },
      });
    });

    it("ignores a package.json without a skillbox field", async () => {
      tree.write("lib/package.json", { name: "left-pad", version: "1.0.0" });
      expect(await readPackage(tree.path("lib"))).toBeUndefined();
    });

    it("rejects a typo inside the skillbox field, naming package.json and `skillbox.timeout`", async () => {
      tree.write("weather/index.js", "export default () => ({});\n");
      tree.write("weather/package.json", {
        name: "weather",
        version: "1.0.0",
        skillbox: { handler: "./index.js", timeout: 5000 },
      });
      const error = await readError("weather");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain(tree.path("weather/package.json"));
      expect(error.message).toContain("`skillbox.timeout`");
    });

    it("rejects a package.json whose version is not semver", async () => {
      tree.write("weather/index.js", "export default () => ({});\n");
      tree.write("weather/package.json", {
        name: "weather",
        version: "one",
        skillbox: { handler: "./index.js" },
      });
      const error = await readError("weather");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain(tree.path("weather/package.json"));
      expect(error.message).toContain("`version`");
    });

    it("rejects a missing handler, naming `skillbox.handler`", async () => {
      tree.write("weather/package.json", {
        name: "weather",
        version: "1.0.0",
        skillbox: { handler: "./dist/index.js" },
      });
      const error = await readError("weather");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain(tree.path("weather/package.json"));
      expect(error.message).toContain("`skillbox.handler`");
    });

    it("rejects invalid JSON in package.json", async () => {
      tree.write("weather/package.json", '{ "name": "weather", "skillbox": ');
      const error = await readError("weather");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain(tree.path("weather/package.json"));
    });
  });

  describe("handler paths", () => {
    it("rejects `..` that leaves the package, even when the file exists", async () => {
      tree.write("outside.ts", replyHandler("escaped"));
      tree.write("pkg/skill.json", skillManifest({ handler: "../outside.ts" }));
      const error = await readError("pkg");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain(tree.path("pkg/skill.json"));
      expect(error.message).toContain("`handler`");
      expect(error.message).toContain("../outside.ts");
    });

    it("rejects `..` hidden in the middle of a path", async () => {
      tree.write("outside.ts", replyHandler("escaped"));
      tree.write("pkg/lib/index.ts", replyHandler("hi"));
      tree.write("pkg/skill.json", skillManifest({ handler: "./lib/../../outside.ts" }));
      const error = await readError("pkg");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain("`handler`");
    });

    it("rejects an absolute path, even to a file inside the package", async () => {
      const inside = tree.write("pkg/index.ts", replyHandler("hi"));
      tree.write("pkg/skill.json", skillManifest({ handler: inside }));
      const error = await readError("pkg");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain("`handler`");
      expect(error.message).toContain("relative");
    });

    it("rejects a symlink that points outside the package", async () => {
      const outside = tree.write("secret/steal.ts", replyHandler("escaped"));
      tree.symlink(outside, "pkg/index.ts");
      tree.write("pkg/skill.json", skillManifest({ handler: "./index.ts" }));
      const error = await readError("pkg");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain(tree.path("pkg/skill.json"));
      expect(error.message).toContain("`handler`");
      expect(error.message).toContain("symlink");
    });

    it("rejects a symlinked folder that leads outside the package", async () => {
      tree.write("secret/index.ts", replyHandler("escaped"));
      tree.symlink(tree.path("secret"), "pkg/lib");
      tree.write("pkg/skill.json", skillManifest({ handler: "./lib/index.ts" }));
      const error = await readError("pkg");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain("`handler`");
    });

    it("rejects the package folder itself as a handler", async () => {
      tree.write("pkg/skill.json", skillManifest({ handler: "." }));
      const error = await readError("pkg");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain("`handler`");
    });

    it("accepts a symlink that stays inside the package and reports the real path", async () => {
      const target = tree.write("pkg/src/impl.ts", replyHandler("hi"));
      tree.symlink("./src/impl.ts", "pkg/index.ts");
      tree.write("pkg/skill.json", skillManifest({ handler: "./index.ts" }));
      const descriptor = await readPackage(tree.path("pkg"));
      expect(descriptor?.handlerPath).toBe(target);
    });

    it("accepts a package reached through a symlinked folder (pnpm-style) whose handler stays inside", async () => {
      tree.write("store/pkg/index.ts", replyHandler("hi"));
      tree.write("store/pkg/skill.json", skillManifest());
      tree.symlink(tree.path("store/pkg"), "plugins/pkg");
      const descriptor = await readPackage(tree.path("plugins/pkg"));
      expect(descriptor?.handlerPath).toBe(tree.path("store/pkg/index.ts"));
    });

    it("rejects traversal in package.json's `skillbox.handler`", async () => {
      tree.write("outside.js", "export default () => ({});\n");
      tree.write("weather/package.json", {
        name: "weather",
        version: "1.0.0",
        skillbox: { handler: "../outside.js" },
      });
      const error = await readError("weather");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain("`skillbox.handler`");
    });

    it("rejects traversal in interceptor.json's `handler`", async () => {
      tree.write("outside.ts", "export default {};\n");
      tree.write("audit/interceptor.json", { name: "audit", handler: "../outside.ts" });
      const error = await readError("audit");
      expect(error.code).toBe("MANIFEST_INVALID");
      expect(error.message).toContain(tree.path("audit/interceptor.json"));
      expect(error.message).toContain("`handler`");
    });
  });
});
