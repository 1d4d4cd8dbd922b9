import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import { isSkillboxError, type RegistryChange, type SkillboxError } from "@skillbox/core";
import {
  type FailedPackage,
  type LoadSkillsResult,
  loadSkills,
  type SkillLoaderOptions,
} from "@skillbox/loader";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_PACKAGE_DEPTH } from "../src/discovery/is-symlink-loop.js";
import { LOADER_MARK } from "../src/manifest/loader-bookkeeping.js";
import { MAX_PACKAGE_FILES } from "../src/module/hash-package-files.js";
import { MESSAGE_INPUT, skillFolder, skillManifest, taggingInterceptorFolder } from "./loader-fixtures.js";

let tree: TemporaryTree;
let host: TemporaryHost;
const results: LoadSkillsResult[] = [];

beforeEach(() => {
  tree = createTemporaryTree();
  tree.mkdir("plugins");
  host = createTemporaryHost();
});

afterEach(async () => {
  for (const result of results.splice(0)) result.loader.close();
  await host.dispose();
  tree.cleanup();
});

/** `loadSkills` over the tree's `plugins/` into the test host, without npm discovery. */
async function load(options: SkillLoaderOptions = {}): Promise<LoadSkillsResult> {
  const result = await loadSkills({
    dirs: [tree.path("plugins")],
    npm: false,
    registry: host.registry,
    executor: host.executor,
    ...options,
  });
  results.push(result);
  return result;
}

const names = (entries: readonly { name: string }[]) => entries.map((entry) => entry.name).sort();

/** Runs `reference` and returns the execution record. */
function run(reference: string, input: unknown = { msg: "hi" }, apiKeyId?: string) {
  return host.executor.execute(reference, input, apiKeyId === undefined ? {} : { apiKeyId });
}

async function executeError(reference: string, input: unknown = { msg: "hi" }, apiKeyId?: string) {
  try {
    await run(reference, input, apiKeyId);
  } catch (error) {
    expect(isSkillboxError(error)).toBe(true);
    return error as SkillboxError;
  }
  return expect.unreachable(`execute("${reference}") resolved`);
}

function recordChanges(): RegistryChange[] {
  const changes: RegistryChange[] = [];
  host.registry.on("change", (change) => changes.push(change));
  return changes;
}

describe("loadSkills", () => {
  describe("discovery", () => {
    it("loads `name/` and `@scope/name/` packages and makes them executable", async () => {
      tree.writeFolder("plugins/echo", skillFolder("plain"));
      tree.writeFolder("plugins/@acme/shout", {
        "package.json": {
          name: "@acme/shout",
          version: "1.4.0",
          description: "Shouts",
          type: "module",
          skillbox: { input: MESSAGE_INPUT, handler: "./index.js" },
        },
        "index.js": "export default (input) => ({ shouted: input.msg.toUpperCase() });\n",
      });

      const report = await load();

      expect(report.failed).toEqual([]);
      expect(names(report.loaded)).toEqual(["@acme/shout", "echo"]);
      expect(report.loaded.find((entry) => entry.name === "@acme/shout")).toMatchObject({
        kind: "skill",
        version: "1.4.0",
        root: tree.path("plugins/@acme/shout"),
        skillId: expect.any(String),
      });
      expect((await run("echo")).output).toEqual({ reply: "plain", msg: "hi" });
      const shout = await run("@acme/shout@^1");
      expect(shout.status).toBe("success");
      expect(shout.output).toEqual({ shouted: "HI" });
      expect(host.registry.getSkill("@acme/shout")?.description).toBe("Shouts");
    });

    it("loads from several folders", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("more/other", skillFolder("two", { name: "other" }));
      const report = await load({ dirs: [tree.path("plugins"), tree.path("more")] });
      expect(names(report.loaded)).toEqual(["echo", "other"]);
    });

    it("loads nothing, and does not fail, when the folder does not exist", async () => {
      const report = await load({ dirs: [tree.path("missing")] });
      expect(report).toMatchObject({ loaded: [], failed: [], removed: [] });
    });

    it("ignores subfolders that are not packages", async () => {
      tree.write("plugins/notes/README.md", "# not a package\n");
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const report = await load();
      expect(names(report.loaded)).toEqual(["echo"]);
      expect(report.failed).toEqual([]);
    });

    it("registers skills as `system`, with their source folder, content hash and handler file", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one", { tags: ["demo"], timeoutMs: 1234 }));
      await load();
      const skill = host.registry.getSkill("echo@1.0.0");
      expect(skill).toMatchObject({
        name: "echo",
        version: "1.0.0",
        apiKeyId: "system",
        source: tree.path("plugins/echo"),
        handler: pathToFileURL(tree.path("plugins/echo/index.ts")).href,
        tags: ["demo"],
        timeoutMs: 1234,
        schema: { input: MESSAGE_INPUT },
        metadata: {
          loader: LOADER_MARK,
          root: tree.path("plugins/echo"),
        },
        code: { codeHash: expect.stringMatching(/^[0-9a-f]{32}$/) },
      });
    });

    it("registers a disabled skill as disabled", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one", { enabled: false }));
      await load();
      expect(host.registry.getSkill("echo")?.enabled).toBe(false);
      expect((await executeError("echo")).code).toBe("SKILL_DISABLED");
    });
  });

  describe("handler modules", () => {
    it.each([
      [
        "TypeScript ESM",
        "index.ts",
        "export default (input: { msg: string }) => ({ via: 'ts ' + input.msg });\n",
      ],
      ["JavaScript ESM", "index.mjs", "export default (input) => ({ via: 'mjs ' + input.msg });\n"],
      ["CommonJS", "index.cjs", "module.exports = (input) => ({ via: 'cjs ' + input.msg });\n"],
      [
        "CommonJS with an async handler",
        "handler.js",
        "module.exports = async function (input) { return { via: 'js ' + input.msg }; };\n",
      ],
      [
        "TypeScript importing a helper",
        "index.ts",
        'import { prefix } from "./lib/prefix.ts";\nexport default (input: { msg: string }) => ({ via: prefix(input.msg) });\n',
      ],
    ])("runs a %s handler", async (_kind, file, source) => {
      tree.writeFolder("plugins/echo", {
        "skill.json": skillManifest({ handler: `./${file}` }),
        [file]: source,
        "lib/prefix.ts": "export const prefix = (text: string) => 'helper ' + text;\n",
      });
      const report = await load();
      expect(report.failed).toEqual([]);
      const execution = await run("echo");
      expect(execution.error).toBeNull();
      expect(execution.output).toEqual({ via: expect.stringMatching(/ hi$/) });
    });

    it("passes the execution context to the handler", async () => {
      tree.writeFolder("plugins/echo", {
        "skill.json": skillManifest(),
        "index.ts": [
          'import type { SkillContext } from "@skillbox/core";',
          "export default (_input: unknown, ctx: SkillContext) => ({",
          "  executionId: ctx.executionId,",
          "  attempt: ctx.attempt,",
          "  apiKeyId: ctx.apiKeyId,",
          "  aborted: ctx.signal.aborted,",
          "  skill: ctx.skill.name,",
          "});",
          "",
        ].join("\n"),
      });
      await load();
      const execution = await run("echo", { msg: "x" }, "tenant-a");
      expect(execution.output).toEqual({
        executionId: execution.id,
        attempt: 1,
        apiKeyId: "tenant-a",
        aborted: false,
        skill: "echo",
      });
    });

    it("takes the schemas from defineSkill's zod schemas when the manifest has none", async () => {
      tree.linkPackages("@skillbox/core", "zod");
      tree.writeFolder("plugins/repeat", {
        "skill.json": { name: "repeat", version: "1.0.0", handler: "./index.ts" },
        "index.ts": [
          'import { defineSkill } from "@skillbox/core";',
          'import { z } from "zod";',
          "",
          "export default defineSkill({",
          '  description: "Repeats a message",',
          "  input: z.object({ msg: z.string(), times: z.number().int().min(1).default(2) }),",
          "  output: z.object({ repeated: z.string() }),",
          "  handler: (input) => ({ repeated: input.msg.repeat(input.times) }),",
          "});",
          "",
        ].join("\n"),
      });

      const report = await load();

      expect(report.failed).toEqual([]);
      const skill = host.registry.getSkill("repeat");
      expect(skill?.description).toBe("Repeats a message");
      expect(skill?.schema.input).toMatchObject({
        type: "object",
        properties: { msg: { type: "string" }, times: { type: "integer" } },
        required: ["msg"],
      });
      expect(skill?.schema.output).toMatchObject({ properties: { repeated: { type: "string" } } });
      expect((await run("repeat", { msg: "ab" })).output).toEqual({ repeated: "abab" });
      expect((await run("repeat", { msg: "ab", times: 3 })).output).toEqual({ repeated: "ababab" });
      const invalid = await run("repeat", { msg: 42 });
      expect(invalid.status).toBe("error");
      expect(invalid.error?.code).toBe("INPUT_INVALID");
    });

    it("lets the manifest override what defineSkill declares", async () => {
      tree.linkPackages("@skillbox/core", "zod");
      tree.writeFolder("plugins/echo", {
        "skill.json": skillManifest({ description: "From the manifest", timeoutMs: 2000 }),
        "index.ts": [
          'import { defineSkill } from "@skillbox/core";',
          'import { z } from "zod";',
          "export default defineSkill({",
          '  description: "From the code",',
          "  timeoutMs: 9000,",
          // The schemas must agree with the manifest's (see manifest/schema-sources.test.ts).
          "  input: z.object({ msg: z.string() }),",
          "  handler: (input) => ({ msg: input.msg }),",
          "});",
          "",
        ].join("\n"),
      });
      await load();
      const skill = host.registry.getSkill("echo");
      expect(skill?.description).toBe("From the manifest");
      expect(skill?.timeoutMs).toBe(2000);
      expect(skill?.schema.input).toEqual(MESSAGE_INPUT);
    });

    it("reports a default export that is not a function as HANDLER_INVALID, naming the module", async () => {
      tree.writeFolder("plugins/bad", {
        "skill.json": { name: "bad", version: "1.0.0", handler: "./index.ts" },
        "index.ts": "export default 42;\n",
      });
      const report = await load();
      expect(report.loaded).toEqual([]);
      expect(report.failed).toEqual([
        {
          root: tree.path("plugins/bad"),
          file: tree.path("plugins/bad/index.ts"),
          code: "HANDLER_INVALID",
          message: expect.stringContaining(tree.path("plugins/bad/index.ts")),
        },
      ]);
      expect(report.failed[0]?.message).toMatch(/default export/);
      expect(host.registry.getSkill("bad")).toBeUndefined();
    });

    it("fails the execution with HANDLER_INVALID when a lazily imported default export is not a function", async () => {
      tree.writeFolder("plugins/bad", {
        "skill.json": skillManifest({ name: "bad" }),
        "index.ts": 'export default { handler: "not a function" };\n',
      });
      const report = await load();
      expect(names(report.loaded)).toEqual(["bad"]);
      const execution = await run("bad");
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("HANDLER_INVALID");
      expect(execution.error?.message).toContain(tree.path("plugins/bad/index.ts"));
    });

    it("imports handlers lazily: not at load, once on the first execution", async () => {
      const counter = `__skillboxLazyImports_${process.pid}_${Date.now()}`;
      tree.writeFolder("plugins/echo", {
        "skill.json": skillManifest(),
        "index.ts": [
          `const scope = globalThis as Record<string, number>;`,
          `scope[${JSON.stringify(counter)}] = (scope[${JSON.stringify(counter)}] ?? 0) + 1;`,
          "export default () => ({ ok: true });",
          "",
        ].join("\n"),
      });
      const imports = () => (globalThis as Record<string, unknown>)[counter];

      await load();
      expect(imports()).toBeUndefined();
      await Promise.all([run("echo"), run("echo"), run("echo")]);
      expect(imports()).toBe(1);
      await run("echo");
      expect(imports()).toBe(1);
      delete (globalThis as Record<string, unknown>)[counter];
    });

    it("reports a package whose handler throws at import as loaded; its first execution fails", async () => {
      tree.writeFolder("plugins/explodes", {
        "skill.json": skillManifest({ name: "explodes" }),
        "index.ts": 'throw new Error("cannot start: missing API key");\nexport default () => ({});\n',
      });
      tree.writeFolder("plugins/echo", skillFolder("fine"));

      const report = await load();

      expect(report.failed).toEqual([]);
      expect(names(report.loaded)).toEqual(["echo", "explodes"]);
      const execution = await run("explodes");
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("HANDLER_INVALID");
      expect(execution.error?.message).toContain(tree.path("plugins/explodes/index.ts"));
      expect(execution.error?.message).toContain("cannot start: missing API key");
      expect((await run("echo")).status).toBe("success");
    });

    it("imports the handler again on the next execution after a failed import", async () => {
      tree.writeFolder("plugins/flaky", {
        "skill.json": skillManifest({ name: "flaky" }),
        "index.ts": 'throw new Error("not yet");\n',
      });
      await load();
      expect((await run("flaky")).error?.code).toBe("HANDLER_INVALID");
      tree.write("plugins/flaky/index.ts", "export default () => ({ now: true });\n");
      expect((await run("flaky")).output).toEqual({ now: true });
    });
  });

  describe("reports", () => {
    it("warns PACKAGE_TOO_LARGE naming the package and the file limit it reached", async () => {
      tree.writeFolder("plugins/big", skillFolder("big", { name: "big" }));
      for (let index = 0; index < MAX_PACKAGE_FILES + 10; index++)
        tree.write(`plugins/big/data/${index}.txt`, "x");

      const report = await load();

      const [warning, ...others] = report.warnings.filter((entry) => entry.code === "PACKAGE_TOO_LARGE");
      expect(others).toEqual([]);
      expect(warning?.folder).toBe(tree.path("plugins/big/data"));
      expect(warning?.message).toContain(`${tree.path("plugins/big")}: more than ${MAX_PACKAGE_FILES} files`);
      expect(warning?.message).not.toContain("deeper");
      expect(names(report.loaded)).toEqual(["big"]);
    });

    it("warns PACKAGE_TOO_LARGE naming the package and the depth limit it reached", async () => {
      tree.writeFolder("plugins/deep", skillFolder("deep", { name: "deep" }));
      const nested = Array.from({ length: MAX_PACKAGE_DEPTH + 2 }, (_, level) => `d${level}`).join("/");
      tree.write(`plugins/deep/${nested}/leaf.txt`, "x");

      const report = await load();

      const [warning, ...others] = report.warnings.filter((entry) => entry.code === "PACKAGE_TOO_LARGE");
      expect(others).toEqual([]);
      expect(warning?.message).toContain(
        `${tree.path("plugins/deep")}: folders nest deeper than ${MAX_PACKAGE_DEPTH} levels`,
      );
      expect(warning?.message).not.toContain(String(MAX_PACKAGE_FILES));
      expect(names(report.loaded)).toEqual(["deep"]);
    });

    it("loads the good packages and reports each broken one with its file, code and reason", async () => {
      tree.writeFolder("plugins/good", skillFolder("good", { name: "good" }));
      tree.writeFolder("plugins/bad-json", {
        "skill.json": '{ "name": ',
        "index.ts": "export default () => 1;\n",
      });
      tree.writeFolder("plugins/bad-field", skillFolder("x", { name: "bad-field", timeout: 10 }));
      tree.writeFolder("plugins/bad-version", skillFolder("x", { name: "bad-version", version: "v1" }));
      tree.writeFolder("plugins/no-handler", { "skill.json": skillManifest({ name: "no-handler" }) });
      tree.writeFolder("plugins/both", {
        ...skillFolder("x", { name: "both" }),
        "interceptor.json": { name: "both", handler: "./index.ts" },
      });
      tree.writeFolder("plugins/syntax", {
        "skill.json": { name: "syntax", version: "1.0.0", handler: "./index.ts" },
        "index.ts": "export default (input => {\n",
      });

      const report = await load();

      expect(names(report.loaded)).toEqual(["good"]);
      const failed: Record<string, FailedPackage> = Object.fromEntries(
        report.failed.map((entry) => [basename(entry.root), entry]),
      );
      expect(Object.keys(failed).sort()).toEqual([
        "bad-field",
        "bad-json",
        "bad-version",
        "both",
        "no-handler",
        "syntax",
      ]);
      for (const [folder, entry] of Object.entries(failed)) {
        expect(entry.root).toBe(tree.path("plugins", folder));
        expect(entry.message).toContain(entry.file);
      }
      expect(failed["bad-json"]).toMatchObject({
        code: "MANIFEST_INVALID",
        file: tree.path("plugins/bad-json/skill.json"),
      });
      expect(failed["bad-field"]).toMatchObject({
        code: "MANIFEST_INVALID",
        file: tree.path("plugins/bad-field/skill.json"),
        message: expect.stringContaining("`timeout`"),
      });
      expect(failed["bad-version"]).toMatchObject({
        code: "MANIFEST_INVALID",
        message: expect.stringContaining("`version`"),
      });
      expect(failed["no-handler"]).toMatchObject({
        code: "MANIFEST_INVALID",
        message: expect.stringContaining("`handler`"),
      });
      expect(failed.both).toMatchObject({ code: "MANIFEST_INVALID", file: tree.path("plugins/both") });
      expect(failed.syntax).toMatchObject({
        code: "HANDLER_INVALID",
        file: tree.path("plugins/syntax/index.ts"),
      });
      // `both` holds an interceptor.json: an interceptor that did not load fails closed.
      expect((await run("good")).error?.code).toBe("INTERCEPTOR_UNAVAILABLE");
      tree.remove("plugins/both");
      await report.loader.loadAll();
      expect((await run("good")).status).toBe("success");
    });
  });

  describe("registry sync", () => {
    it("does not rewrite unchanged packages on the next load", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/other", skillFolder("two", { name: "other" }));
      await load();
      const before = host.registry.list().map((skill) => ({ id: skill.id, updatedAt: skill.updatedAt }));
      const changes = recordChanges();

      const second = await load();

      expect(names(second.loaded)).toEqual(["echo", "other"]);
      expect(second.removed).toEqual([]);
      expect(changes.filter((change) => change.origin === "local")).toEqual([]);
      expect(host.registry.list().map((skill) => ({ id: skill.id, updatedAt: skill.updatedAt }))).toEqual(
        before,
      );
    });

    it("does not rewrite unchanged packages on the next load of the same loader", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const { loader } = await load();
      const updatedAt = host.registry.getSkill("echo")?.updatedAt;
      const changes = recordChanges();
      const report = await loader.loadAll();
      expect(names(report.loaded)).toEqual(["echo"]);
      expect(changes.filter((change) => change.origin === "local")).toEqual([]);
      expect(host.registry.getSkill("echo")?.updatedAt).toBe(updatedAt);
    });

    it("rewrites a package whose helper file changed (new content hash) and runs the new code", async () => {
      tree.writeFolder("plugins/echo", {
        "skill.json": skillManifest(),
        "index.ts": 'import { word } from "./word.ts";\nexport default () => ({ word });\n',
        "word.ts": 'export const word = "old";\n',
      });
      await load();
      const hash = host.registry.getSkill("echo")?.code?.codeHash;
      expect((await run("echo")).output).toEqual({ word: "old" });

      tree.write("plugins/echo/word.ts", 'export const word = "new";\n');
      const fresh = await loadSkills({
        dirs: [tree.path("plugins")],
        npm: false,
        registry: host.registry,
        executor: host.executor,
      });
      results.push(fresh);
      // The first loader no longer owns this package's handler: close it, as a restarted process would.
      results[0]?.loader.close();

      expect(host.registry.getSkill("echo")?.code?.codeHash).not.toBe(hash);
      expect((await run("echo")).output).toEqual({ word: "new" });
    });

    it("unregisters a package that disappeared and reports it as removed", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/gone", skillFolder("two", { name: "gone" }));
      await load();
      expect(host.registry.getSkill("gone")).toBeDefined();

      tree.remove("plugins/gone");
      const report = await load();

      expect(report.removed).toEqual([
        {
          kind: "skill",
          name: "gone",
          version: "1.0.0",
          root: tree.path("plugins/gone"),
          skillId: expect.any(String),
        },
      ]);
      expect(names(report.loaded)).toEqual(["echo"]);
      expect(host.registry.getSkill("gone")).toBeUndefined();
      expect((await executeError("gone")).code).toBe("SKILL_NOT_FOUND");
    });

    it("unregisters a disappeared package on the next load of the same loader, without reporting it loaded", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/gone", skillFolder("two", { name: "gone" }));
      const { loader } = await load();

      tree.remove("plugins/gone");
      const report = await loader.loadAll();

      expect(names(report.removed)).toEqual(["gone"]);
      expect(host.registry.getSkill("gone")).toBeUndefined();
      expect(names(report.loaded)).toEqual(["echo"]);
      expect(names(loader.list())).toEqual(["echo"]);
    });

    // Regression: the full load and the watcher's sync had two reconcilers, and only the sync
    // dropped the old entry of a folder whose version changed (the full load kept serving it).
    it("replaces a folder's old version on the next load of the same loader, as a sync does", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one", { version: "1.0.0" }));
      const { loader } = await load();
      tree.write("plugins/echo/skill.json", skillManifest({ version: "1.1.0" }));
      const report = await loader.loadAll();
      expect(report.loaded.map((entry) => entry.version)).toEqual(["1.1.0"]);
      expect(host.registry.getSkillVersions("echo").map((skill) => skill.version)).toEqual(["1.1.0"]);
    });

    it("stops an interceptor plugin that disappeared before the next load of the same loader", async () => {
      tree.linkPackages("@skillbox/core");
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/stamp", taggingInterceptorFolder("stamp", "stamped", "yes"));
      const { loader } = await load();
      expect((await run("echo")).output).toMatchObject({ stamped: "yes" });

      tree.remove("plugins/stamp");
      const report = await loader.loadAll();

      expect((await run("echo")).output).toEqual({ reply: "one", msg: "hi" });
      expect(names(report.removed)).toEqual(["stamp"]);
      expect(names(report.loaded)).toEqual(["echo"]);
    });

    it("leaves skills registered through the API and packages outside its folders alone", async () => {
      host.registry.register({ name: "api-skill", version: "1.0.0", handler: "api-handler" });
      tree.writeFolder("elsewhere/foreign", skillFolder("x", { name: "foreign" }));
      await load({ dirs: [tree.path("elsewhere")] });
      tree.writeFolder("plugins/echo", skillFolder("one"));

      const report = await load();

      expect(report.removed).toEqual([]);
      expect(host.registry.getSkill("api-skill")).toBeDefined();
      expect(host.registry.getSkill("foreign")).toBeDefined();
    });

    it("registers two versions of one skill from two folders and resolves them by range", async () => {
      tree.writeFolder("plugins/echo-v1", skillFolder("one", { version: "1.3.0" }));
      tree.writeFolder("plugins/echo-v2", skillFolder("two", { version: "2.0.1" }));

      const report = await load();

      expect(report.failed).toEqual([]);
      expect(report.loaded.map((entry) => `${entry.name}@${entry.version}`).sort()).toEqual([
        "echo@1.3.0",
        "echo@2.0.1",
      ]);
      expect(host.registry.getSkillVersions("echo").map((skill) => skill.version)).toEqual([
        "2.0.1",
        "1.3.0",
      ]);
      expect((await run("echo@^1")).output).toMatchObject({ reply: "one" });
      expect((await run("echo@~2.0.0")).output).toMatchObject({ reply: "two" });
      expect((await run("echo")).output).toMatchObject({ reply: "two" });
      expect((await executeError("echo@^3")).code).toBe("SKILL_NOT_FOUND");

      tree.remove("plugins/echo-v2");
      const after = await load();
      expect(after.removed.map((entry) => entry.version)).toEqual(["2.0.1"]);
      expect((await run("echo")).output).toMatchObject({ reply: "one" });
    });
  });

  describe("duplicates", () => {
    it("refuses a second folder with the same name and version, naming both folders", async () => {
      tree.writeFolder("plugins/a-echo", skillFolder("first"));
      tree.writeFolder("plugins/b-echo", skillFolder("second"));

      const report = await load();

      expect(report.loaded.map((entry) => entry.root)).toEqual([tree.path("plugins/a-echo")]);
      expect(report.failed).toEqual([
        {
          root: tree.path("plugins/b-echo"),
          file: tree.path("plugins/b-echo/skill.json"),
          code: "MANIFEST_INVALID",
          message: expect.stringContaining(tree.path("plugins/a-echo")),
        },
      ]);
      expect((await run("echo")).output).toMatchObject({ reply: "first" });
    });
  });

  describe("owner", () => {
    it("registers skills for the given owner, visible only to that owner", async () => {
      tree.writeFolder("plugins/echo", skillFolder("mine"));
      const report = await load({ owner: "tenant-a" });
      expect(names(report.loaded)).toEqual(["echo"]);
      expect(host.registry.getSkill("echo", "tenant-a")?.apiKeyId).toBe("tenant-a");
      expect((await run("echo", { msg: "x" }, "tenant-a")).output).toEqual({ reply: "mine", msg: "x" });
      expect((await executeError("echo", { msg: "x" }, "tenant-b")).code).toBe("SKILL_NOT_FOUND");
      expect((await executeError("echo", { msg: "x" })).code).toBe("SKILL_NOT_FOUND");
    });

    it("shadows the global version for its owner and leaves other owners' packages alone", async () => {
      tree.writeFolder("plugins/echo", skillFolder("global"));
      tree.writeFolder("tenant/echo", skillFolder("tenant"));
      await load();
      await load({ owner: "tenant-a", dirs: [tree.path("tenant")] });

      expect((await run("echo", { msg: "x" }, "tenant-a")).output).toMatchObject({ reply: "tenant" });
      expect((await run("echo", { msg: "x" }, "tenant-b")).output).toMatchObject({ reply: "global" });

      // A system load that no longer sees tenant/ does not touch tenant-a's skills.
      const report = await load();
      expect(report.removed).toEqual([]);
      expect(host.registry.getSkill("echo", "tenant-a")?.apiKeyId).toBe("tenant-a");
    });
  });

  describe("interceptor plugins", () => {
    it("runs an interceptor plugin on executions and reports it loaded", async () => {
      tree.linkPackages("@skillbox/core");
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/stamp", taggingInterceptorFolder("stamp", "stamped", "yes"));

      const report = await load();

      expect(report.loaded.find((entry) => entry.name === "stamp")).toEqual({
        kind: "interceptor",
        name: "stamp",
        version: undefined,
        root: tree.path("plugins/stamp"),
      });
      expect((await run("echo")).output).toEqual({ reply: "one", msg: "hi", stamped: "yes" });
    });

    it("passes the manifest's options to a factory default export", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/suffix", {
        "interceptor.json": { name: "suffix", handler: "./index.ts", options: { suffix: "!!" } },
        "index.ts": [
          "export default (options: { suffix: string }) => ({",
          '  name: "ignored-in-favour-of-the-manifest",',
          "  before(context: { input: { msg: string } }) {",
          "    return { input: { msg: context.input.msg + options.suffix } };",
          "  },",
          "});",
          "",
        ].join("\n"),
      });
      const report = await load();
      expect(report.failed).toEqual([]);
      expect((await run("echo")).output).toEqual({ reply: "one", msg: "hi!!" });
    });

    it("applies the manifest's order and match", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/other", skillFolder("two", { name: "other" }));
      const appending = (letter: string) =>
        `export default { after(_c: unknown, r: { output: { trail?: string } }) { return { output: { ...r.output, trail: (r.output.trail ?? "") + ${JSON.stringify(letter)} } }; } };\n`;
      tree.writeFolder("plugins/a", {
        "interceptor.json": { name: "a", handler: "./index.ts", order: 1, match: { names: "echo" } },
        "index.ts": appending("a"),
      });
      tree.writeFolder("plugins/b", {
        "interceptor.json": { name: "b", handler: "./index.ts", order: 2 },
        "index.ts": appending("b"),
      });
      await load();
      // After hooks unwind in reverse order: b (order 2) first, then a.
      expect((await run("echo")).output).toMatchObject({ trail: "ba" });
      expect((await run("other")).output).toMatchObject({ trail: "b" });
    });

    it("reports a factory that throws as HANDLER_INVALID, naming the manifest whose options it got", async () => {
      tree.writeFolder("plugins/picky", {
        "interceptor.json": { name: "picky", handler: "./index.ts", options: {} },
        "index.ts":
          'export default (options: { key?: string }) => { if (!options.key) throw new Error("`key` is required"); return {}; };\n',
      });
      const report = await load();
      expect(report.failed).toEqual([
        expect.objectContaining({
          code: "HANDLER_INVALID",
          file: tree.path("plugins/picky/interceptor.json"),
          message: expect.stringContaining("`key` is required"),
        }),
      ]);
    });

    it("reports an interceptor module that exports neither an object nor a factory", async () => {
      tree.writeFolder("plugins/bad", {
        "interceptor.json": { name: "bad", handler: "./index.ts" },
        "index.ts": 'export default "nope";\n',
      });
      const report = await load();
      expect(report.failed).toEqual([
        expect.objectContaining({ code: "HANDLER_INVALID", file: tree.path("plugins/bad/index.ts") }),
      ]);
    });

    it('loads an interceptor from a package.json with "skillbox": { "kind": "interceptor" }', async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/pkg-interceptor", {
        "package.json": {
          name: "skillbox-stamp",
          version: "1.0.0",
          type: "module",
          skillbox: { kind: "interceptor", handler: "./index.js", options: { value: "pkg" } },
        },
        "index.js":
          "export default (options) => ({ after: (_c, r) => ({ output: { ...r.output, from: options.value } }) });\n",
      });
      const report = await load();
      expect(report.loaded.find((entry) => entry.kind === "interceptor")?.name).toBe("skillbox-stamp");
      expect((await run("echo")).output).toMatchObject({ from: "pkg" });
    });

    it("does not run an interceptor whose manifest says enabled: false", async () => {
      tree.linkPackages("@skillbox/core");
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder(
        "plugins/stamp",
        taggingInterceptorFolder("stamp", "stamped", "yes", { enabled: false }),
      );
      await load();
      expect((await run("echo")).output).toEqual({ reply: "one", msg: "hi" });
    });
  });

  describe("requires", () => {
    it("reports unmet requirements and keeps the skill uncallable", async () => {
      tree.writeFolder(
        "plugins/summary",
        skillFolder("s", { name: "summary", requires: { fetcher: "^1.2.0" } }),
      );
      tree.writeFolder("plugins/echo", skillFolder("one"));

      const report = await load();

      expect(names(report.loaded)).toEqual(["echo"]);
      expect(report.failed).toEqual([
        {
          root: tree.path("plugins/summary"),
          file: tree.path("plugins/summary/skill.json"),
          code: "REQUIREMENTS_UNMET",
          message: expect.stringContaining("fetcher@^1.2.0"),
        },
      ]);
      expect(report.failed[0]?.message).toContain(tree.path("plugins/summary/skill.json"));
      expect(host.registry.getSkill("summary")).toBeUndefined();
      expect((await executeError("summary")).code).toBe("SKILL_NOT_FOUND");
    });

    it("treats a dependency outside the declared range as unmet", async () => {
      tree.writeFolder(
        "plugins/summary",
        skillFolder("s", { name: "summary", requires: { fetcher: "^1.2.0" } }),
      );
      tree.writeFolder("plugins/fetcher", skillFolder("f", { name: "fetcher", version: "1.1.9" }));
      const report = await load();
      expect(report.failed.map((entry) => entry.code)).toEqual(["REQUIREMENTS_UNMET"]);
      expect(host.registry.getSkill("summary")).toBeUndefined();
    });

    it("loads skills whose requirements are met in the same load, whatever the order, including chains", async () => {
      tree.writeFolder("plugins/a-top", skillFolder("top", { name: "top", requires: { middle: "^2.0.0" } }));
      tree.writeFolder(
        "plugins/b-middle",
        skillFolder("middle", { name: "middle", version: "2.1.0", requires: { bottom: "1.x" } }),
      );
      tree.writeFolder("plugins/c-bottom", skillFolder("bottom", { name: "bottom", version: "1.0.0" }));
      const report = await load();
      expect(report.failed).toEqual([]);
      expect(names(report.loaded)).toEqual(["bottom", "middle", "top"]);
      expect((await run("top")).status).toBe("success");
    });

    it("lets ctx.call reach declared dependencies, within their range", async () => {
      tree.writeFolder("plugins/caller", {
        "skill.json": skillManifest({ name: "caller", requires: { echo: "^1.0.0" } }),
        "index.ts": [
          'import type { SkillContext } from "@skillbox/core";',
          "export default async (input: { msg: string }, ctx: SkillContext) => ({",
          '  inner: await ctx.call("echo", { msg: input.msg }),',
          "});",
          "",
        ].join("\n"),
      });
      tree.writeFolder("plugins/echo-1", skillFolder("v1", { version: "1.5.0" }));
      tree.writeFolder("plugins/echo-2", skillFolder("v2", { version: "2.0.0" }));
      await load();
      const execution = await run("caller", { msg: "x" });
      expect(execution.error).toBeNull();
      expect(execution.output).toEqual({ inner: { reply: "v1", msg: "x" } });
    });

    it("refuses ctx.call to a skill the caller's requires does not declare", async () => {
      tree.writeFolder("plugins/caller", {
        "skill.json": skillManifest({ name: "caller", requires: { echo: "^1.0.0" } }),
        "index.ts": [
          'import type { SkillContext } from "@skillbox/core";',
          'export default async (_input: unknown, ctx: SkillContext) => ({ inner: await ctx.call("secret", {}) });',
          "",
        ].join("\n"),
      });
      tree.writeFolder("plugins/echo", skillFolder("v1"));
      tree.writeFolder("plugins/secret", skillFolder("s", { name: "secret", input: { type: "object" } }));
      await load();
      const execution = await run("caller");
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("UNDECLARED_DEPENDENCY");
      expect(execution.error?.message).toContain("secret");
    });
  });

  describe("npm packages", () => {
    /** Writes an installed package into `project/node_modules/<name>`. */
    function installPackage(name: string, reply: string): void {
      tree.writeFolder(`project/node_modules/${name}`, {
        "package.json": {
          name,
          version: "3.0.0",
          description: `${name} from npm`,
          type: "module",
          skillbox: { input: MESSAGE_INPUT, handler: "./index.js" },
        },
        "index.js": `export default (input) => ({ reply: ${JSON.stringify(reply)}, msg: input.msg });\n`,
      });
    }

    it("discovers installed packages with a skillbox field in projectRoot's node_modules", async () => {
      installPackage("skill-hello", "hello");
      installPackage("@acme/skill-bye", "bye");
      tree.write("project/node_modules/left-pad/package.json", { name: "left-pad", version: "1.0.0" });

      const report = await load({ dirs: [], npm: true, projectRoot: tree.path("project") });

      expect(report.failed).toEqual([]);
      expect(names(report.loaded)).toEqual(["@acme/skill-bye", "skill-hello"]);
      expect((await run("skill-hello@^3")).output).toEqual({ reply: "hello", msg: "hi" });
      expect((await run("@acme/skill-bye")).output).toEqual({ reply: "bye", msg: "hi" });
      expect(host.registry.getSkill("skill-hello")?.description).toBe("skill-hello from npm");
    });

    it("skips node_modules when npm discovery is off", async () => {
      installPackage("skill-hello", "hello");
      const report = await load({ dirs: [], npm: false, projectRoot: tree.path("project") });
      expect(report.loaded).toEqual([]);
    });

    it("leaves npm packages alone when a later load does not look at node_modules", async () => {
      installPackage("skill-hello", "hello");
      await load({ dirs: [], npm: true, projectRoot: tree.path("project") });

      const report = await load({ npm: false });

      expect(report.removed).toEqual([]);
      expect(host.registry.getSkill("skill-hello")).toBeDefined();
    });

    it("leaves another project's npm packages alone", async () => {
      installPackage("skill-hello", "hello");
      tree.write("other-project/package.json", { name: "other", version: "1.0.0" });
      await load({ dirs: [], npm: true, projectRoot: tree.path("project") });

      const report = await load({ dirs: [], npm: true, projectRoot: tree.path("other-project") });

      expect(report.removed).toEqual([]);
      expect(host.registry.getSkill("skill-hello")).toBeDefined();
    });

    it("unregisters an npm package that was uninstalled", async () => {
      installPackage("skill-hello", "hello");
      await load({ dirs: [], npm: true, projectRoot: tree.path("project") });
      tree.remove("project/node_modules/skill-hello");
      const report = await load({ dirs: [], npm: true, projectRoot: tree.path("project") });
      expect(names(report.removed)).toEqual(["skill-hello"]);
      expect(host.registry.getSkill("skill-hello")).toBeUndefined();
    });
  });
});
