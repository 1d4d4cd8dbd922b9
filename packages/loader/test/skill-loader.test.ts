import { renameSync } from "node:fs";
import { createSkillHost, type RegistryChange, type SkillHost } from "@skillbox/core";
import { SkillLoader, type SkillLoaderOptions } from "@skillbox/loader";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  recordEvents,
  replyHandler,
  skillFolder,
  skillManifest,
  taggingInterceptorFolder,
} from "./loader-fixtures.js";

let tree: TemporaryTree;
let host: TemporaryHost;
const loaders: SkillLoader[] = [];
const extraHosts: SkillHost[] = [];

beforeEach(() => {
  tree = createTemporaryTree();
  tree.mkdir("plugins");
  host = createTemporaryHost();
});

afterEach(async () => {
  for (const loader of loaders.splice(0)) loader.close();
  for (const extra of extraHosts.splice(0)) await extra.close();
  await host.dispose();
  tree.cleanup();
});

function createLoader(options: SkillLoaderOptions = {}): SkillLoader {
  const loader = new SkillLoader({
    dirs: [tree.path("plugins")],
    npm: false,
    registry: host.registry,
    executor: host.executor,
    ...options,
  });
  loaders.push(loader);
  return loader;
}

const run = (reference: string, input: unknown = { msg: "hi" }) => host.executor.execute(reference, input);
const outputOf = async (reference: string) => (await run(reference)).output;

describe("SkillLoader", () => {
  // Regression: every load registered the manifest's `enabled`, so a restart or an edit
  // silently re-enabled a skill an operator had disabled.
  describe("an operator's enable/disable", () => {
    it("survives a restart, and an edit of the code", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      await createLoader().loadAll();
      const loaded = host.registry.getSkill("echo");
      host.registry.setEnabledById(loaded?.id ?? "", false);

      const restarted = createLoader();
      await restarted.loadAll();
      expect(host.registry.getSkill("echo")?.enabled).toBe(false);

      tree.write("plugins/echo/index.ts", replyHandler("two"));
      await restarted.syncPackage(tree.path("plugins/echo"));
      expect(host.registry.getSkill("echo")?.code?.codeHash).not.toBe(loaded?.code?.codeHash);
      expect(host.registry.getSkill("echo")?.enabled).toBe(false);
      await expect(run("echo")).rejects.toMatchObject({ code: "SKILL_DISABLED" });
    });

    it("gives way when the manifest's own `enabled` changes", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const loader = createLoader();
      await loader.loadAll();
      host.registry.setEnabledById(host.registry.getSkill("echo")?.id ?? "", false);

      tree.write("plugins/echo/skill.json", skillManifest({ enabled: false }));
      await loader.syncPackage(tree.path("plugins/echo"));
      tree.write("plugins/echo/skill.json", skillManifest({ enabled: true }));
      await loader.syncPackage(tree.path("plugins/echo"));

      expect(host.registry.getSkill("echo")?.enabled).toBe(true);
    });
  });

  describe("syncPackage", () => {
    it("loads a new package folder and emits `loaded`", async () => {
      const loader = createLoader();
      const events = recordEvents(loader);
      await loader.loadAll();
      tree.writeFolder("plugins/echo", skillFolder("new"));

      await loader.syncPackage(tree.path("plugins/echo"));

      expect(events.loaded).toEqual([
        {
          kind: "skill",
          name: "echo",
          version: "1.0.0",
          root: tree.path("plugins/echo"),
          skillId: expect.any(String),
        },
      ]);
      expect(events.error).toEqual([]);
      expect(await outputOf("echo")).toEqual({ reply: "new", msg: "hi" });
    });

    it("reloads a changed package, emits `reloaded` and serves the new code", async () => {
      tree.writeFolder("plugins/echo", skillFolder("old"));
      const loader = createLoader();
      await loader.loadAll();
      expect(await outputOf("echo")).toMatchObject({ reply: "old" });
      const events = recordEvents(loader);

      tree.write("plugins/echo/index.ts", replyHandler("new"));
      await loader.syncPackage(tree.path("plugins/echo"));

      expect(events.reloaded.map((entry) => entry.name)).toEqual(["echo"]);
      expect(await outputOf("echo")).toMatchObject({ reply: "new" });
    });

    it("removes a deleted package, emits `removed` and unregisters it", async () => {
      tree.writeFolder("plugins/echo", skillFolder("old"));
      const loader = createLoader();
      await loader.loadAll();
      const events = recordEvents(loader);

      tree.remove("plugins/echo");
      await loader.syncPackage(tree.path("plugins/echo"));

      expect(events.removed).toEqual([
        expect.objectContaining({ name: "echo", root: tree.path("plugins/echo") }),
      ]);
      expect(host.registry.getSkill("echo")).toBeUndefined();
      expect(loader.list()).toEqual([]);
      await expect(run("echo")).rejects.toMatchObject({ code: "SKILL_NOT_FOUND" });
    });

    it("replaces the old version when a folder's version changes", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one", { version: "1.0.0" }));
      const loader = createLoader();
      await loader.loadAll();

      tree.write("plugins/echo/skill.json", skillManifest({ version: "1.1.0" }));
      await loader.syncPackage(tree.path("plugins/echo"));

      expect(host.registry.getSkillVersions("echo").map((skill) => skill.version)).toEqual(["1.1.0"]);
      expect((await run("echo@1.1.0")).status).toBe("success");
    });

    it("replaces the old name when a folder's skill is renamed", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const loader = createLoader();
      await loader.loadAll();
      tree.write("plugins/echo/skill.json", skillManifest({ name: "parrot" }));
      await loader.syncPackage(tree.path("plugins/echo"));
      expect(host.registry.getSkill("echo")).toBeUndefined();
      expect(await outputOf("parrot")).toMatchObject({ reply: "one" });
    });

    it("keeps the skill registered when its folder is renamed and the new folder is synced first", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const loader = createLoader();
      await loader.loadAll();

      renameSync(tree.path("plugins/echo"), tree.path("plugins/echo-renamed"));
      await loader.syncPackage(tree.path("plugins/echo-renamed"));
      await loader.syncPackage(tree.path("plugins/echo"));

      expect(loader.list().map((entry) => entry.root)).toEqual([tree.path("plugins/echo-renamed")]);
      expect(host.registry.getSkill("echo")?.source).toBe(tree.path("plugins/echo-renamed"));
      expect(await outputOf("echo")).toMatchObject({ reply: "one" });
    });

    it("keeps the skill registered when its folder is renamed and the old folder is synced first", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const loader = createLoader();
      await loader.loadAll();

      renameSync(tree.path("plugins/echo"), tree.path("plugins/echo-renamed"));
      await loader.syncPackage(tree.path("plugins/echo"));
      await loader.syncPackage(tree.path("plugins/echo-renamed"));

      expect(host.registry.getSkill("echo")?.source).toBe(tree.path("plugins/echo-renamed"));
      expect(await outputOf("echo")).toMatchObject({ reply: "one" });
    });

    it("turns a skill folder into an interceptor folder cleanly", async () => {
      tree.linkPackages("@skillbox/core");
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/shape", skillFolder("shape", { name: "shape" }));
      const loader = createLoader();
      await loader.loadAll();

      tree.remove("plugins/shape");
      tree.writeFolder("plugins/shape", taggingInterceptorFolder("shape", "shaped", "yes"));
      await loader.syncPackage(tree.path("plugins/shape"));

      expect(host.registry.getSkill("shape")).toBeUndefined();
      expect(await outputOf("echo")).toMatchObject({ shaped: "yes" });
      expect(
        loader
          .list()
          .map((entry) => `${entry.kind}:${entry.name}`)
          .sort(),
      ).toEqual(["interceptor:shape", "skill:echo"]);
    });

    it("reloads an edited manifest (schemas, tags) without touching the handler", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const loader = createLoader();
      await loader.loadAll();
      tree.write("plugins/echo/skill.json", skillManifest({ tags: ["edited"], input: { type: "object" } }));
      await loader.syncPackage(tree.path("plugins/echo"));
      expect(host.registry.getSkill("echo")?.tags).toEqual(["edited"]);
      expect((await run("echo", { other: 1 })).status).toBe("success");
    });
  });

  describe("interceptor names", () => {
    it("refuses a second folder with the same interceptor name, and promotes it when the first goes", async () => {
      tree.linkPackages("@skillbox/core");
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/stamp-a", taggingInterceptorFolder("stamp", "stamped", "a"));
      tree.writeFolder("plugins/stamp-b", taggingInterceptorFolder("stamp", "stamped", "b"));
      const loader = createLoader();
      const report = await loader.loadAll();
      expect(report.failed).toEqual([
        expect.objectContaining({
          root: tree.path("plugins/stamp-b"),
          code: "MANIFEST_INVALID",
          message: expect.stringContaining('interceptor "stamp" is already provided by'),
        }),
      ]);
      expect(await outputOf("echo")).toMatchObject({ stamped: "a" });

      tree.remove("plugins/stamp-a");
      await loader.syncPackage(tree.path("plugins/stamp-a"));

      expect(loader.list().map((entry) => entry.root)).toContain(tree.path("plugins/stamp-b"));
      expect(await outputOf("echo")).toMatchObject({ stamped: "b" });
    });
  });

  describe("broken edits", () => {
    it("imports eagerly on reload: a handler that throws at import keeps the last good version and emits `error`", async () => {
      tree.writeFolder("plugins/echo", skillFolder("good"));
      const loader = createLoader();
      await loader.loadAll();
      expect(await outputOf("echo")).toMatchObject({ reply: "good" });
      const events = recordEvents(loader);

      tree.write("plugins/echo/index.ts", 'throw new Error("broken at import");\n');
      await loader.syncPackage(tree.path("plugins/echo"));

      expect(events.error).toEqual([
        {
          root: tree.path("plugins/echo"),
          file: tree.path("plugins/echo/index.ts"),
          code: "HANDLER_INVALID",
          message: expect.stringContaining("broken at import"),
        },
      ]);
      expect(events.reloaded).toEqual([]);
      expect(await outputOf("echo")).toMatchObject({ reply: "good" });
    });

    it("keeps the last good manifest when the manifest breaks", async () => {
      tree.writeFolder("plugins/echo", skillFolder("good", { tags: ["v1"] }));
      const loader = createLoader();
      await loader.loadAll();
      const events = recordEvents(loader);

      tree.write("plugins/echo/skill.json", '{ "name": "echo", "version": ');
      await loader.syncPackage(tree.path("plugins/echo"));

      expect(events.error).toEqual([
        expect.objectContaining({ code: "MANIFEST_INVALID", file: tree.path("plugins/echo/skill.json") }),
      ]);
      expect(host.registry.getSkill("echo")?.tags).toEqual(["v1"]);
      expect(await outputOf("echo")).toMatchObject({ reply: "good" });
    });

    it("after warmUp(), keeps serving the last good version after a broken edit even if it never ran", async () => {
      // Handlers are imported lazily at start-up; warmUp() imports them ahead of any execution,
      // so a broken edit landing before the first execution still has a good version to fall back on.
      tree.writeFolder("plugins/echo", skillFolder("good"));
      const loader = createLoader();
      await loader.loadAll();
      await loader.warmUp();
      const events = recordEvents(loader);

      tree.write("plugins/echo/index.ts", 'throw new Error("broken at import");\n');
      await loader.syncPackage(tree.path("plugins/echo"));

      expect(events.error.map((entry) => entry.code)).toEqual(["HANDLER_INVALID"]);
      const execution = await run("echo");
      expect(execution.error).toBeNull();
      expect(execution.output).toMatchObject({ reply: "good" });
    });

    it("warmUp() never fails, even when a handler throws at import", async () => {
      tree.writeFolder("plugins/echo", skillFolder("good"));
      tree.writeFolder("plugins/broken", {
        "skill.json": skillManifest({ name: "broken" }),
        "index.ts": 'throw new Error("nope");\n',
      });
      const loader = createLoader();
      await loader.loadAll();
      await expect(loader.warmUp()).resolves.toBeUndefined();
      expect((await run("broken")).error?.code).toBe("HANDLER_INVALID");
      expect(await outputOf("echo")).toMatchObject({ reply: "good" });
    });

    it("does not emit `error` without a listener (a loader never throws on bad input)", async () => {
      tree.writeFolder("plugins/echo", skillFolder("good"));
      const loader = createLoader();
      await loader.loadAll();
      tree.write("plugins/echo/skill.json", "{");
      await expect(loader.syncPackage(tree.path("plugins/echo"))).resolves.toBeUndefined();
      tree.writeFolder("plugins/bad", { "skill.json": "{" });
      const report = await loader.loadAll();
      expect(report.failed.map((entry) => entry.file).sort()).toEqual([
        tree.path("plugins/bad/skill.json"),
        tree.path("plugins/echo/skill.json"),
      ]);
    });
  });

  describe("registry writes", () => {
    /** Local registry writes recorded from now on. */
    function recordWrites(): RegistryChange[] {
      const changes: RegistryChange[] = [];
      host.registry.on("change", (change) => {
        if (change.origin === "local") changes.push(change);
      });
      return changes;
    }

    it("writes nothing when an unchanged package is synced again", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const loader = createLoader();
      await loader.loadAll();
      const writes = recordWrites();
      await loader.syncPackage(tree.path("plugins/echo"));
      expect(writes).toEqual([]);
    });

    it("registers the same definition whether the defineSkill module was imported at load or on reload", async () => {
      tree.linkPackages("@skillbox/core", "zod");
      tree.writeFolder("plugins/echo", {
        "skill.json": skillManifest(),
        "index.ts": [
          'import { defineSkill } from "@skillbox/core";',
          "export default defineSkill({",
          "  timeoutMs: 1234,",
          '  tags: ["from-code"],',
          "  handler: (input: { msg: string }) => ({ msg: input.msg }),",
          "});",
          "",
        ].join("\n"),
      });
      const loader = createLoader();
      await loader.loadAll();
      const atLoad = host.registry.getSkill("echo");
      const writes = recordWrites();

      await loader.syncPackage(tree.path("plugins/echo"));

      const afterReload = host.registry.getSkill("echo");
      expect({ timeoutMs: afterReload?.timeoutMs, tags: afterReload?.tags }).toEqual({
        timeoutMs: atLoad?.timeoutMs,
        tags: atLoad?.tags,
      });
      expect(writes).toEqual([]);
    });
  });

  describe("requires", () => {
    it("makes a skill callable once its dependency appears, and uncallable when it goes", async () => {
      tree.writeFolder(
        "plugins/summary",
        skillFolder("s", { name: "summary", requires: { fetcher: "^1.2.0" } }),
      );
      const loader = createLoader();
      const events = recordEvents(loader);
      const report = await loader.loadAll();
      expect(report.failed.map((entry) => entry.code)).toEqual(["REQUIREMENTS_UNMET"]);
      expect(events.error.map((entry) => entry.code)).toEqual(["REQUIREMENTS_UNMET"]);
      await expect(run("summary")).rejects.toMatchObject({ code: "SKILL_NOT_FOUND" });

      tree.writeFolder("plugins/fetcher", skillFolder("f", { name: "fetcher", version: "1.2.5" }));
      await loader.syncPackage(tree.path("plugins/fetcher"));

      expect(events.loaded.map((entry) => entry.name).sort()).toEqual(["fetcher", "summary"]);
      expect(await outputOf("summary")).toMatchObject({ reply: "s" });

      events.error.length = 0;
      tree.remove("plugins/fetcher");
      await loader.syncPackage(tree.path("plugins/fetcher"));

      expect(events.error).toEqual([
        expect.objectContaining({
          code: "REQUIREMENTS_UNMET",
          root: tree.path("plugins/summary"),
          message: expect.stringContaining("fetcher@^1.2.0"),
        }),
      ]);
      await expect(run("summary")).rejects.toMatchObject({ code: "SKILL_NOT_FOUND" });
    });

    it("loads a dependent whose requirement a registry skill registered through the API satisfies", async () => {
      host.registry.register({ name: "fetcher", version: "1.3.0", handler: "fetch" });
      tree.writeFolder(
        "plugins/summary",
        skillFolder("s", { name: "summary", requires: { fetcher: "^1.2.0" } }),
      );
      const loader = createLoader();
      const report = await loader.loadAll();
      expect(report.failed).toEqual([]);
      expect(report.loaded.map((entry) => entry.name)).toEqual(["summary"]);
    });

    it("does not count another owner's skill as meeting a requirement", async () => {
      host.registry.register({ name: "fetcher", version: "1.3.0", handler: "fetch", apiKeyId: "tenant-b" });
      tree.writeFolder(
        "plugins/summary",
        skillFolder("s", { name: "summary", requires: { fetcher: "^1.2.0" } }),
      );
      const loader = createLoader({ owner: "tenant-a" });
      const report = await loader.loadAll();
      expect(report.failed.map((entry) => entry.code)).toEqual(["REQUIREMENTS_UNMET"]);
    });

    it("rechecks when a dependency's version moves out of range", async () => {
      tree.writeFolder(
        "plugins/summary",
        skillFolder("s", { name: "summary", requires: { fetcher: "^1.2.0" } }),
      );
      tree.writeFolder("plugins/fetcher", skillFolder("f", { name: "fetcher", version: "1.2.0" }));
      const loader = createLoader();
      const events = recordEvents(loader);
      expect((await loader.loadAll()).failed).toEqual([]);

      tree.write("plugins/fetcher/skill.json", skillManifest({ name: "fetcher", version: "2.0.0" }));
      await loader.syncPackage(tree.path("plugins/fetcher"));

      expect(events.error.map((entry) => entry.code)).toEqual(["REQUIREMENTS_UNMET"]);
      expect(host.registry.getSkill("summary")).toBeUndefined();
    });
  });

  describe("handlers", () => {
    it("stops serving handlers once closed", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const loader = createLoader();
      await loader.loadAll();
      loader.close();
      const execution = await run("echo");
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("HANDLER_NOT_FOUND");
    });

    it("serves handlers of skills another process's loader registered in the same database", async () => {
      tree.writeFolder("plugins/echo", skillFolder("from-disk"));
      await createLoader().loadAll();

      const other = createSkillHost({
        database: host.databasePath,
        logger: { debug() {}, info() {}, warn() {}, error() {} },
      });
      extraHosts.push(other);
      const otherLoader = new SkillLoader({
        dirs: [],
        npm: false,
        registry: other.registry,
        executor: other.executor,
      });
      loaders.push(otherLoader);

      const execution = await other.executor.execute("echo", { msg: "x" });
      expect(execution.error).toBeNull();
      expect(execution.output).toEqual({ reply: "from-disk", msg: "x" });
    });

    it("lists the packages it knows", async () => {
      tree.linkPackages("@skillbox/core");
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/stamp", taggingInterceptorFolder("stamp", "s", "1"));
      const loader = createLoader();
      await loader.loadAll();
      expect(
        loader
          .list()
          .map((entry) => `${entry.kind}:${entry.name}`)
          .sort(),
      ).toEqual(["interceptor:stamp", "skill:echo"]);
    });

    it("knows which watched folder holds a package folder", () => {
      const loader = createLoader();
      expect(loader.paths.watchedFolderOf(tree.path("plugins/echo"))).toBe(tree.path("plugins"));
      expect(loader.paths.watchedFolderOf(tree.path("plugins-other/echo"))).toBeUndefined();
      expect(loader.paths.watchedFolderOf(tree.path("elsewhere/echo"))).toBeUndefined();
    });
  });
});
