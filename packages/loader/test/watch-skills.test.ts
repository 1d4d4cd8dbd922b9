import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { renameSync } from "node:fs";
import {
  type LoadWarning,
  loadSkills,
  type SkillWatcher,
  type WatchSkillsOptions,
  watchSkills,
} from "@skillbox/loader";
import { makeSymlinkRing } from "@skillbox/test-helpers/symlink-ring";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  nextEvent,
  type RecordedEvents,
  recordEvents,
  replyHandler,
  skillFolder,
  skillManifest,
  taggingInterceptorFolder,
} from "./loader-fixtures.js";

let tree: TemporaryTree;
let host: TemporaryHost;
let watcher: SkillWatcher | undefined;
let events: RecordedEvents;

beforeEach(() => {
  tree = createTemporaryTree();
  tree.mkdir("plugins");
  tree.linkPackages("@skillbox/core");
  host = createTemporaryHost();
});

afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
  await host.dispose();
  tree.cleanup();
});

/** Starts a watcher over the tree's `plugins/` and waits until it listens. */
async function startWatcher(options: WatchSkillsOptions = {}): Promise<SkillWatcher> {
  watcher = watchSkills({
    dirs: [tree.path("plugins")],
    npm: false,
    registry: host.registry,
    executor: host.executor,
    ...options,
  });
  events = recordEvents(watcher);
  await watcher.ready();
  return watcher;
}

const run = (reference: string, input: unknown = { msg: "hi" }) => host.executor.execute(reference, input);
const outputOf = async (reference: string) => (await run(reference)).output;
const named = (name: string) => (payload: { name: string }) => payload.name === name;
const inFolder = (folder: string) => (payload: { root: string }) =>
  payload.root === tree.path("plugins", folder);

describe("watchSkills", () => {
  describe("start-up and shutdown", () => {
    it("ready() resolves with the first load's report, and emits `ready`", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/bad", { "skill.json": "{" });
      watcher = watchSkills({
        dirs: [tree.path("plugins")],
        npm: false,
        registry: host.registry,
        executor: host.executor,
      });
      events = recordEvents(watcher);
      const readyEvent = new Promise((resolve) => watcher!.on("ready", resolve));

      const report = await watcher.ready();

      expect(report.loaded.map((entry) => entry.name)).toEqual(["echo"]);
      expect(report.failed.map((entry) => entry.file)).toEqual([tree.path("plugins/bad/skill.json")]);
      expect(await readyEvent).toBe(report);
      expect(await outputOf("echo")).toMatchObject({ reply: "one" });
    });

    it("stops serving handlers once closed, and close() may be called again", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const active = await startWatcher();
      await active.close();
      await active.close();
      const execution = await run("echo");
      expect(execution.error?.code).toBe("HANDLER_NOT_FOUND");
    });

    it("can be closed before it is ready", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      watcher = watchSkills({
        dirs: [tree.path("plugins")],
        npm: false,
        registry: host.registry,
        executor: host.executor,
      });
      await watcher.close();
      await expect(watcher.ready()).resolves.toBeDefined();
    });

    it("idle() resolves at once when nothing is pending", async () => {
      const active = await startWatcher();
      await expect(active.idle()).resolves.toBeUndefined();
    });
  });

  describe("skill packages", () => {
    it("loads a folder dropped into the watched folder and makes it executable", async () => {
      const active = await startWatcher();
      const loaded = nextEvent(active, "loaded", named("echo"));

      tree.writeFolder("plugins/echo", skillFolder("dropped"));

      expect(await loaded).toMatchObject({
        kind: "skill",
        version: "1.0.0",
        root: tree.path("plugins/echo"),
      });
      expect(await outputOf("echo")).toEqual({ reply: "dropped", msg: "hi" });
    });

    it("loads an `@scope/name` folder", async () => {
      const active = await startWatcher();
      const loaded = nextEvent(active, "loaded", named("@acme/echo"));
      tree.writeFolder("plugins/@acme/echo", skillFolder("scoped", { name: "@acme/echo" }));
      expect(await loaded).toMatchObject({ root: tree.path("plugins/@acme/echo") });
      expect(await outputOf("@acme/echo")).toMatchObject({ reply: "scoped" });
    });

    it("loads a package written file by file, once it is complete", async () => {
      const active = await startWatcher();
      const loaded = nextEvent(active, "loaded", named("echo"));
      tree.mkdir("plugins/echo");
      tree.write("plugins/echo/index.ts", replyHandler("piecemeal"));
      tree.write("plugins/echo/skill.json", skillManifest());
      await loaded;
      expect(await outputOf("echo")).toMatchObject({ reply: "piecemeal" });
    });

    it("runs the new code on the next execution after the handler is edited", async () => {
      tree.writeFolder("plugins/echo", skillFolder("old"));
      const active = await startWatcher();
      expect(await outputOf("echo")).toMatchObject({ reply: "old" });

      const reloaded = nextEvent(active, "reloaded", named("echo"));
      tree.write("plugins/echo/index.ts", replyHandler("new"));
      await reloaded;

      expect(await outputOf("echo")).toMatchObject({ reply: "new" });
    });

    it("runs the new code after a helper module the handler imports is edited", async () => {
      tree.writeFolder("plugins/echo", {
        "skill.json": skillManifest(),
        "index.ts": 'import { word } from "./lib/word.ts";\nexport default () => ({ word });\n',
        "lib/word.ts": 'export const word = "old";\n',
      });
      const active = await startWatcher();
      expect(await outputOf("echo")).toEqual({ word: "old" });

      const reloaded = nextEvent(active, "reloaded", named("echo"));
      tree.write("plugins/echo/lib/word.ts", 'export const word = "new";\n');
      await reloaded;

      expect(await outputOf("echo")).toEqual({ word: "new" });
      expect(events.error).toEqual([]);
    });

    // Node caches natively imported modules forever: these handlers used to log `reloaded` and
    // keep running their first version.
    it.each([
      ["an .mjs handler and its .mjs helper", {}, "index.mjs", "word.mjs", "esm"],
      ["a .cjs handler and its .cjs helper", {}, "index.cjs", "word.cjs", "cjs"],
      [
        'a .js handler of a "type": "module" package',
        { "package.json": { type: "module" } },
        "index.js",
        "word.js",
        "esm",
      ],
    ] as const)(
      "runs the new code of %s edited after it ran",
      async (_kind, extra, entry, helper, format) => {
        const files = (version: string) => ({
          [helper]:
            format === "esm" ? `export const word = "${version}";\n` : `exports.word = "${version}";\n`,
          [entry]:
            format === "esm"
              ? `import { word } from "./${helper}";\nexport default () => ({ reply: "${version}", word });\n`
              : `const { word } = require("./${helper}");\nmodule.exports = () => ({ reply: "${version}", word });\n`,
        });
        tree.writeFolder("plugins/echo", {
          "skill.json": skillManifest({ handler: `./${entry}` }),
          ...extra,
          ...files("old"),
        });
        const active = await startWatcher();
        expect(await outputOf("echo")).toEqual({ reply: "old", word: "old" });

        const reloaded = nextEvent(active, "reloaded", named("echo"));
        tree.write(`plugins/echo/${helper}`, files("new")[helper]!);
        tree.write(`plugins/echo/${entry}`, files("new")[entry]!);
        await reloaded;
        await active.idle();

        expect(await outputOf("echo")).toEqual({ reply: "new", word: "new" });
        expect(events.error).toEqual([]);
      },
    );

    it("picks up a second edit of the same file made right after the first one reloaded", async () => {
      // Editors and tools often save twice in quick succession; the last save must win.
      tree.writeFolder("plugins/echo", skillFolder("v0"));
      const active = await startWatcher();

      const first = nextEvent(active, "reloaded", named("echo"));
      tree.write("plugins/echo/index.ts", replyHandler("v1"));
      await first;
      const second = nextEvent(active, "reloaded", named("echo"));
      tree.write("plugins/echo/index.ts", replyHandler("v2"));
      await second;

      expect(await outputOf("echo")).toMatchObject({ reply: "v2" });
    });

    it("re-registers the skill when its manifest is edited", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const active = await startWatcher();

      const reloaded = nextEvent(active, "reloaded", named("echo"));
      tree.write("plugins/echo/skill.json", skillManifest({ tags: ["edited"], description: "Edited" }));
      await reloaded;

      expect(host.registry.getSkill("echo")).toMatchObject({ tags: ["edited"], description: "Edited" });
    });

    it("unregisters a deleted folder and emits `removed`", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const active = await startWatcher();

      const removed = nextEvent(active, "removed", named("echo"));
      tree.remove("plugins/echo");

      expect(await removed).toMatchObject({ kind: "skill", root: tree.path("plugins/echo") });
      await expect(run("echo")).rejects.toMatchObject({ code: "SKILL_NOT_FOUND" });
    });

    it("loads a folder again after it was deleted", async () => {
      tree.writeFolder("plugins/echo", skillFolder("first"));
      const active = await startWatcher();
      const removed = nextEvent(active, "removed", named("echo"));
      tree.remove("plugins/echo");
      await removed;

      const loaded = nextEvent(active, "loaded", named("echo"));
      tree.writeFolder("plugins/echo", skillFolder("second"));
      await loaded;

      expect(await outputOf("echo")).toMatchObject({ reply: "second" });
    });

    it("keeps the skill when its folder is renamed", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const active = await startWatcher();
      const loaded = nextEvent(active, "loaded", inFolder("echo-renamed"));
      const removed = nextEvent(active, "removed", inFolder("echo"));

      renameSync(tree.path("plugins/echo"), tree.path("plugins/echo-renamed"));
      await Promise.all([loaded, removed]);
      await active.idle();

      expect(host.registry.getSkill("echo")?.source).toBe(tree.path("plugins/echo-renamed"));
      expect(await outputOf("echo")).toMatchObject({ reply: "one" });
    });

    it("reloads packages of every watched folder, even folders whose names share a prefix", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins-extra/other", skillFolder("two", { name: "other" }));
      const active = await startWatcher({ dirs: [tree.path("plugins"), tree.path("plugins-extra")] });
      expect(await outputOf("other")).toMatchObject({ reply: "two" });

      const reloaded = nextEvent(active, "reloaded", named("other"));
      tree.write("plugins-extra/other/index.ts", replyHandler("two-edited"));
      expect(await reloaded).toMatchObject({ root: tree.path("plugins-extra/other") });

      expect(await outputOf("other")).toMatchObject({ reply: "two-edited" });
    });

    it("loads a package that was broken at start-up once it is fixed", async () => {
      tree.writeFolder("plugins/echo", { ...skillFolder("late"), "skill.json": "{" });
      const active = await startWatcher();
      expect(events.loaded).toEqual([]);

      const loaded = nextEvent(active, "loaded", named("echo"));
      tree.write("plugins/echo/skill.json", skillManifest());
      await loaded;

      expect(await outputOf("echo")).toMatchObject({ reply: "late" });
    });

    it("reloads only the package that changed", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/other", skillFolder("two", { name: "other" }));
      const active = await startWatcher();

      const reloaded = nextEvent(active, "reloaded", named("echo"));
      tree.write("plugins/echo/index.ts", replyHandler("edited"));
      await reloaded;
      await active.idle();

      expect(events.reloaded.map((entry) => entry.name)).toEqual(["echo"]);
      expect(events.loaded).toEqual([]);
    });

    it("debounces a burst of writes to one package into one reload of the last version", async () => {
      tree.writeFolder("plugins/echo", skillFolder("v0"));
      const active = await startWatcher({ debounceMs: 150 });

      const reloaded = nextEvent(active, "reloaded", named("echo"));
      for (let version = 1; version <= 5; version++) {
        tree.write("plugins/echo/index.ts", replyHandler(`v${version}`));
        tree.write("plugins/echo/skill.json", skillManifest({ tags: [`v${version}`] }));
      }
      await reloaded;
      await active.idle();

      expect(events.reloaded).toHaveLength(1);
      expect(host.registry.getSkill("echo")?.tags).toEqual(["v5"]);
      expect(await outputOf("echo")).toMatchObject({ reply: "v5" });
    });

    it("debounces per package: two packages edited together both reload", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/other", skillFolder("two", { name: "other" }));
      const active = await startWatcher({ debounceMs: 100 });

      const both = Promise.all([
        nextEvent(active, "reloaded", named("echo")),
        nextEvent(active, "reloaded", named("other")),
      ]);
      tree.write("plugins/echo/index.ts", replyHandler("one-edited"));
      tree.write("plugins/other/index.ts", replyHandler("two-edited"));
      await both;

      expect(await outputOf("echo")).toMatchObject({ reply: "one-edited" });
      expect(await outputOf("other")).toMatchObject({ reply: "two-edited" });
    });
  });

  describe("hashing", () => {
    /** Counts how often each package folder is hashed while `body` runs. */
    async function countHashes(body: () => Promise<void>): Promise<Map<string, number>> {
      const counts = new Map<string, number>();
      const listener = (message: unknown) => {
        const { root } = message as { root: string };
        counts.set(root, (counts.get(root) ?? 0) + 1);
      };
      subscribe("skillbox:loader:package-hashed", listener);
      try {
        await body();
      } finally {
        unsubscribe("skillbox:loader:package-hashed", listener);
      }
      return counts;
    }

    // Regression: a watched reload hashed the package three times (before, during, after the sync).
    it("hashes a package once per reload", async () => {
      tree.writeFolder("plugins/echo", skillFolder("old"));
      const active = await startWatcher();
      await active.idle();
      const counts = await countHashes(async () => {
        const reloaded = nextEvent(active, "reloaded", named("echo"));
        tree.write("plugins/echo/index.ts", replyHandler("new"));
        await reloaded;
        await active.idle();
      });
      expect(Object.fromEntries(counts)).toEqual({ [tree.path("plugins/echo")]: 1 });
      expect(await outputOf("echo")).toMatchObject({ reply: "new" });
    });

    it("hashes a bundle once when its shared code changes, for all its members", async () => {
      tree.writeFolder("plugins/tools", {
        "package.json": { name: "tools", private: true, type: "module", skillbox: { kind: "bundle" } },
        "lib/word.ts": 'export const word = "old";\n',
      });
      for (const member of ["one", "two"]) {
        tree.writeFolder(`plugins/tools/${member}`, {
          "skill.json": skillManifest({ name: `tools.${member}` }),
          "index.ts": 'import { word } from "../lib/word.ts";\nexport default () => ({ word });\n',
        });
      }
      const active = await startWatcher();
      await active.idle();
      const counts = await countHashes(async () => {
        const one = nextEvent(active, "reloaded", named("tools.one"));
        const two = nextEvent(active, "reloaded", named("tools.two"));
        tree.write("plugins/tools/lib/word.ts", 'export const word = "new";\n');
        await Promise.all([one, two]);
        await active.idle();
      });
      expect(Object.fromEntries(counts)).toEqual({ [tree.path("plugins/tools")]: 1 });
      expect(await outputOf("tools.two")).toEqual({ word: "new" });
    });
  });

  describe("next to a loadSkills loader of the same folders", () => {
    // Both loaders add a handler resolver to the executor; the first one used to answer with the
    // module it imported at start-up even after the watcher had registered a new version.
    it.each(["index.ts", "index.mjs"])("runs the watcher's new version of an edited %s", async (entry) => {
      const handler = (reply: string) => `export default () => ({ reply: ${JSON.stringify(reply)} });\n`;
      tree.writeFolder("plugins/echo", {
        "skill.json": skillManifest({ handler: `./${entry}` }),
        [entry]: handler("old"),
      });
      const first = await loadSkills({
        dirs: [tree.path("plugins")],
        npm: false,
        registry: host.registry,
        executor: host.executor,
      });
      try {
        expect(await outputOf("echo")).toEqual({ reply: "old" });
        const active = await startWatcher();
        expect(await outputOf("echo")).toEqual({ reply: "old" });

        const reloaded = nextEvent(active, "reloaded", named("echo"));
        tree.write(`plugins/echo/${entry}`, handler("new"));
        await reloaded;

        expect(await outputOf("echo")).toEqual({ reply: "new" });
        expect(events.error).toEqual([]);
      } finally {
        first.loader.close();
      }
    });
  });

  describe("symlinks", () => {
    // Links back into the package used to be followed forever: two links to `.` made the watch
    // grow without bound (2^depth paths) and never become ready.
    it.each([2, 3])(
      "watches a package with %d symlinks to `.`: ready, runs, reloads an edit, closes",
      async (links) => {
        tree.writeFolder("plugins/echo", skillFolder("old"));
        const linkPaths = Array.from({ length: links }, (_, index) =>
          tree.symlink(".", `plugins/echo/loop-${index}`),
        );
        const warnings: LoadWarning[] = [];
        const active = watchSkills({
          dirs: [tree.path("plugins")],
          npm: false,
          registry: host.registry,
          executor: host.executor,
        });
        watcher = active;
        events = recordEvents(active);
        active.on("warning", (warning) => warnings.push(warning));
        const report = await active.ready();
        expect(await outputOf("echo")).toMatchObject({ reply: "old" });

        const reloaded = nextEvent(active, "reloaded", named("echo"));
        tree.write("plugins/echo/index.ts", replyHandler("new"));
        await reloaded;
        expect(await outputOf("echo")).toMatchObject({ reply: "new" });

        // Each link is named once, in the first load's report, and not followed.
        const loopWarnings = report.warnings.filter((warning) => warning.code === "SYMLINK_LOOP");
        expect(loopWarnings.map((warning) => warning.folder).sort()).toEqual(linkPaths.sort());
        expect(loopWarnings[0]!.message).toContain("loop-0");
        expect(warnings.filter((warning) => warning.code === "SYMLINK_LOOP")).toHaveLength(links);
        expect(events.error).toEqual([]);
        await active.close();
        watcher = undefined;
      },
    );
  });

  describe("symlink rings", () => {
    // Loops caught per path alone: 3^8 paths watched and hashed, 550 MB and no `ready` in 80 s.
    it("watches a package holding a ring of 8 folders with 3 links each: ready, runs, reloads an edit in the ring, closes", async () => {
      tree.writeFolder("plugins/echo", skillFolder("old"));
      makeSymlinkRing(tree, { folder: "plugins/echo", length: 8, linksPerFolder: 3 });
      const active = await startWatcher();
      expect(await outputOf("echo")).toMatchObject({ reply: "old" });

      const reloaded = nextEvent(active, "reloaded", named("echo"));
      tree.write("plugins/echo/index.ts", replyHandler("new"));
      await reloaded;
      expect(await outputOf("echo")).toMatchObject({ reply: "new" });
      // A file inside the ring is part of the package: its edit reloads it too.
      await active.idle();
      const ringEdit = nextEvent(active, "reloaded", named("echo"));
      tree.write("plugins/echo/r5/file.txt", "edited\n");
      await ringEdit;

      expect(events.error).toEqual([]);
      await active.close();
      watcher = undefined;
    });

    it("names at most 20 loop links of a package, then one line for the rest", async () => {
      tree.writeFolder("plugins/echo", skillFolder("old"));
      for (let index = 0; index < 30; index++) tree.symlink(".", `plugins/echo/loop-${index}`);
      const report = await (await startWatcher()).ready();
      const loopWarnings = report.warnings.filter((warning) => warning.code === "SYMLINK_LOOP");
      expect(loopWarnings).toHaveLength(21);
      expect(loopWarnings[20]).toMatchObject({ folder: tree.path("plugins/echo") });
      expect(loopWarnings[20]!.message).toContain("and 10 more symlinks");
      expect(await outputOf("echo")).toMatchObject({ reply: "old" });
    });
  });

  describe("symlinks made while watching", () => {
    it("names a link to `.` made while watching, does not follow it, and keeps reloading edits", async () => {
      tree.writeFolder("plugins/echo", skillFolder("old"));
      const active = await startWatcher();
      const warned = new Promise<LoadWarning>((resolve) => active.on("warning", resolve));

      const link = tree.symlink(".", "plugins/echo/loop");
      expect(await warned).toMatchObject({ code: "SYMLINK_LOOP", folder: link });
      await active.idle();

      const reloaded = nextEvent(active, "reloaded", named("echo"));
      tree.write("plugins/echo/index.ts", replyHandler("new"));
      await reloaded;
      expect(await outputOf("echo")).toMatchObject({ reply: "new" });
      expect(events.error).toEqual([]);
    });
  });

  describe("broken edits", () => {
    /** Starts with `echo` serving "good" (already executed once) and returns the watcher. */
    async function startServingGood(): Promise<SkillWatcher> {
      tree.writeFolder("plugins/echo", skillFolder("good"));
      const active = await startWatcher();
      expect(await outputOf("echo")).toMatchObject({ reply: "good" });
      return active;
    }

    /** Fixes the package with a new handler and waits for the reload. */
    async function fix(active: SkillWatcher, reply: string): Promise<void> {
      const reloaded = nextEvent(active, "reloaded", named("echo"));
      tree.write("plugins/echo/skill.json", skillManifest());
      tree.write("plugins/echo/index.ts", replyHandler(reply));
      await reloaded;
      expect(await outputOf("echo")).toMatchObject({ reply });
    }

    it("keeps the last good version when the manifest becomes invalid JSON, and resumes once fixed", async () => {
      const active = await startServingGood();

      const error = nextEvent(active, "error", inFolder("echo"));
      tree.write("plugins/echo/skill.json", '{ "name": "echo", ');
      expect(await error).toMatchObject({
        code: "MANIFEST_INVALID",
        file: tree.path("plugins/echo/skill.json"),
        message: expect.stringContaining(tree.path("plugins/echo/skill.json")),
      });
      expect(await outputOf("echo")).toMatchObject({ reply: "good" });

      await fix(active, "fixed");
    });

    it("picks up a fix of the manifest saved right after the broken save was reported", async () => {
      const active = await startServingGood();

      const error = nextEvent(active, "error", inFolder("echo"));
      tree.write("plugins/echo/skill.json", "{");
      await error;
      const reloaded = nextEvent(active, "reloaded", named("echo"));
      tree.write("plugins/echo/skill.json", skillManifest({ tags: ["fixed"] }));
      await reloaded;

      expect(host.registry.getSkill("echo")?.tags).toEqual(["fixed"]);
    });

    it("keeps the last good version when a manifest field becomes invalid, naming the field", async () => {
      const active = await startServingGood();

      const error = nextEvent(active, "error", inFolder("echo"));
      tree.write("plugins/echo/skill.json", skillManifest({ timeout: 5000 }));
      const payload = await error;
      expect(payload).toMatchObject({ code: "MANIFEST_INVALID", file: tree.path("plugins/echo/skill.json") });
      expect(payload.message).toContain("`timeout`");
      expect(await outputOf("echo")).toMatchObject({ reply: "good" });
      expect(host.registry.getSkill("echo")).toBeDefined();

      await fix(active, "fixed");
    });

    it("keeps the last good version when the handler gets a syntax error, and resumes once fixed", async () => {
      const active = await startServingGood();

      const error = nextEvent(active, "error", inFolder("echo"));
      tree.write("plugins/echo/index.ts", "export default (input => {\n");
      expect(await error).toMatchObject({
        code: "HANDLER_INVALID",
        file: tree.path("plugins/echo/index.ts"),
      });
      expect(await outputOf("echo")).toMatchObject({ reply: "good" });

      await fix(active, "fixed");
    });

    it("keeps the last good version when the handler throws at import, and resumes once fixed", async () => {
      const active = await startServingGood();

      const error = nextEvent(active, "error", inFolder("echo"));
      tree.write("plugins/echo/index.ts", 'throw new Error("missing configuration");\n');
      const payload = await error;
      expect(payload).toMatchObject({ code: "HANDLER_INVALID", file: tree.path("plugins/echo/index.ts") });
      expect(payload.message).toContain("missing configuration");
      expect(await outputOf("echo")).toMatchObject({ reply: "good" });

      await fix(active, "fixed");
    });

    it("keeps the last good version when a helper the handler imports breaks", async () => {
      tree.writeFolder("plugins/echo", {
        "skill.json": skillManifest(),
        "index.ts": 'import { word } from "./word.ts";\nexport default () => ({ word });\n',
        "word.ts": 'export const word = "good";\n',
      });
      const active = await startWatcher();
      expect(await outputOf("echo")).toEqual({ word: "good" });

      const error = nextEvent(active, "error", inFolder("echo"));
      tree.write("plugins/echo/word.ts", "export const word = ;\n");
      expect(await error).toMatchObject({ code: "HANDLER_INVALID" });
      expect(await outputOf("echo")).toEqual({ word: "good" });

      const reloaded = nextEvent(active, "reloaded", named("echo"));
      tree.write("plugins/echo/word.ts", 'export const word = "fixed";\n');
      await reloaded;
      expect(await outputOf("echo")).toEqual({ word: "fixed" });
    });

    it("keeps the last good version when the default export stops being a function", async () => {
      const active = await startServingGood();
      const error = nextEvent(active, "error", inFolder("echo"));
      tree.write("plugins/echo/index.ts", "export default { not: 'a function' };\n");
      expect(await error).toMatchObject({
        code: "HANDLER_INVALID",
        file: tree.path("plugins/echo/index.ts"),
      });
      expect(await outputOf("echo")).toMatchObject({ reply: "good" });
      await fix(active, "fixed");
    });

    it("keeps the last good version after a broken edit even if that version had not run yet", async () => {
      tree.writeFolder("plugins/echo", skillFolder("good"));
      const active = await startWatcher();
      // idle() waits for the background import of every handler that follows start-up.
      await active.idle();

      const error = nextEvent(active, "error", inFolder("echo"));
      tree.write("plugins/echo/index.ts", 'throw new Error("broken before first use");\n');
      await error;

      const execution = await run("echo");
      expect(execution.error).toBeNull();
      expect(execution.output).toMatchObject({ reply: "good" });
    });

    it("rejects a handler path edited to escape the package and keeps the last good version", async () => {
      tree.write("outside.ts", replyHandler("escaped"));
      const active = await startServingGood();

      const error = nextEvent(active, "error", inFolder("echo"));
      tree.write("plugins/echo/skill.json", skillManifest({ handler: "../../outside.ts" }));
      const payload = await error;
      expect(payload.code).toBe("MANIFEST_INVALID");
      expect(payload.message).toContain("`handler`");
      expect(await outputOf("echo")).toMatchObject({ reply: "good" });
    });

    it("survives a run of bad input and still reloads good edits afterwards", async () => {
      tree.writeFolder("plugins/echo", skillFolder("good"));
      const active = await startWatcher();

      /** Each entry: the folder it breaks, and how. */
      const badInput: [string, () => void][] = [
        [
          "invalid-json",
          () => tree.writeFolder("plugins/invalid-json", { "skill.json": "{{", "index.ts": "" }),
        ],
        ["typo", () => tree.writeFolder("plugins/typo", skillFolder("b", { name: "typo", timeout: 1 }))],
        ["bad-version", () => tree.writeFolder("plugins/bad-version", skillFolder("c", { version: "1" }))],
        [
          "both-manifests",
          () =>
            tree.writeFolder("plugins/both-manifests", {
              ...skillFolder("d", { name: "both" }),
              "interceptor.json": { name: "both", handler: "./index.ts" },
            }),
        ],
        [
          "symlink-escape",
          () => {
            tree.write("secret.ts", replyHandler("secret"));
            tree.mkdir("plugins/symlink-escape");
            tree.symlink(tree.path("secret.ts"), "plugins/symlink-escape/index.ts");
            tree.write("plugins/symlink-escape/skill.json", skillManifest({ name: "escape" }));
          },
        ],
        [
          "syntax-error",
          () =>
            tree.writeFolder("plugins/syntax-error", {
              "skill.json": { name: "syntax", version: "1.0.0", handler: "./index.ts" },
              "index.ts": "export default (",
            }),
        ],
        [
          "bad-interceptor",
          () =>
            tree.writeFolder("plugins/bad-interceptor", {
              "interceptor.json": { name: "bad", handler: "./index.ts" },
              "index.ts": "export default 1;\n",
            }),
        ],
        [
          "throwing-factory",
          () =>
            tree.writeFolder("plugins/throwing-factory", {
              "interceptor.json": { name: "throwing", handler: "./index.ts" },
              "index.ts": 'export default () => { throw new Error("no"); };\n',
            }),
        ],
        [
          "bad-skillbox-field",
          () =>
            tree.writeFolder("plugins/bad-skillbox-field", {
              "package.json": { name: "i", version: "1.0.0", skillbox: 42 },
            }),
        ],
        ["garbage", () => tree.writeFolder("plugins/garbage", { "skill.json": "\u0000\u0001\u0002" })],
      ];
      for (const [folder, write] of badInput) {
        const error = nextEvent(active, "error", inFolder(folder));
        write();
        await expect(error, folder).resolves.toMatchObject({ root: tree.path("plugins", folder) });
      }
      await active.idle();
      // Interceptors that did not load fail closed until they load or go away.
      expect((await run("echo")).error?.code).toBe("INTERCEPTOR_UNAVAILABLE");
      for (const folder of ["both-manifests", "bad-interceptor", "throwing-factory"]) {
        const removed = nextEvent(active, "removed", inFolder(folder));
        tree.remove(`plugins/${folder}`);
        await removed;
      }

      const reloaded = nextEvent(active, "reloaded", named("echo"));
      tree.write("plugins/echo/index.ts", replyHandler("still alive"));
      await reloaded;
      expect(await outputOf("echo")).toMatchObject({ reply: "still alive" });
      expect(host.registry.list().map((skill) => skill.name)).toEqual(["echo"]);
    });

    it("ignores stray files at the top of the watched folder", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const active = await startWatcher();

      tree.write("plugins/README.md", "# My plugins\n");
      tree.write("plugins/.DS_Store", "junk");
      const reloaded = nextEvent(active, "reloaded", named("echo"));
      tree.write("plugins/echo/index.ts", replyHandler("two"));
      await reloaded;
      await active.idle();

      expect(events.error).toEqual([]);
    });
  });

  describe("requires", () => {
    it("makes a waiting skill callable when its dependency is dropped in", async () => {
      tree.writeFolder(
        "plugins/summary",
        skillFolder("s", { name: "summary", requires: { fetcher: "^1.0.0" } }),
      );
      const active = await startWatcher();
      await expect(run("summary")).rejects.toMatchObject({ code: "SKILL_NOT_FOUND" });

      const loaded = nextEvent(active, "loaded", named("summary"));
      tree.writeFolder("plugins/fetcher", skillFolder("f", { name: "fetcher" }));
      await loaded;

      expect(await outputOf("summary")).toMatchObject({ reply: "s" });
    });

    it("reports the dependent when its dependency is deleted", async () => {
      tree.writeFolder(
        "plugins/summary",
        skillFolder("s", { name: "summary", requires: { fetcher: "^1.0.0" } }),
      );
      tree.writeFolder("plugins/fetcher", skillFolder("f", { name: "fetcher" }));
      const active = await startWatcher();
      expect(await outputOf("summary")).toMatchObject({ reply: "s" });

      const error = nextEvent(active, "error", (payload) => payload.code === "REQUIREMENTS_UNMET");
      tree.remove("plugins/fetcher");
      expect(await error).toMatchObject({ root: tree.path("plugins/summary") });
      await expect(run("summary")).rejects.toMatchObject({ code: "SKILL_NOT_FOUND" });
    });
  });

  describe("interceptor plugins", () => {
    it("runs an added interceptor, runs its edited version, and stops running it once removed", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const active = await startWatcher();
      expect(await outputOf("echo")).toEqual({ reply: "one", msg: "hi" });

      const loaded = nextEvent(active, "loaded", named("stamp"));
      tree.writeFolder("plugins/stamp", taggingInterceptorFolder("stamp", "stamped", "v1"));
      expect(await loaded).toMatchObject({ kind: "interceptor", root: tree.path("plugins/stamp") });
      expect(await outputOf("echo")).toEqual({ reply: "one", msg: "hi", stamped: "v1" });

      const reloaded = nextEvent(active, "reloaded", named("stamp"));
      tree.write("plugins/stamp/index.ts", taggingInterceptorFolder("stamp", "stamped", "v2")["index.ts"]!);
      await reloaded;
      expect(await outputOf("echo")).toEqual({ reply: "one", msg: "hi", stamped: "v2" });

      const removed = nextEvent(active, "removed", named("stamp"));
      tree.remove("plugins/stamp");
      expect(await removed).toMatchObject({ kind: "interceptor" });
      expect(await outputOf("echo")).toEqual({ reply: "one", msg: "hi" });
    });

    it("re-creates a factory interceptor with new options when interceptor.json changes", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      const manifest = (suffix: string) => ({ name: "suffix", handler: "./index.ts", options: { suffix } });
      tree.writeFolder("plugins/suffix", {
        "interceptor.json": manifest("?"),
        "index.ts": [
          'import { defineInterceptor } from "@skillbox/core";',
          "export default (options: { suffix: string }) =>",
          "  defineInterceptor({",
          '    name: "suffix",',
          "    before: (context) => ({ input: { msg: (context.input as { msg: string }).msg + options.suffix } }),",
          "  });",
          "",
        ].join("\n"),
      });
      const active = await startWatcher();
      expect(await outputOf("echo")).toMatchObject({ msg: "hi?" });

      const reloaded = nextEvent(active, "reloaded", named("suffix"));
      tree.write("plugins/suffix/interceptor.json", manifest("!"));
      await reloaded;

      expect(await outputOf("echo")).toMatchObject({ msg: "hi!" });
    });

    it("keeps the last good interceptor after a broken edit, and resumes once fixed", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/stamp", taggingInterceptorFolder("stamp", "stamped", "good"));
      const active = await startWatcher();
      expect(await outputOf("echo")).toMatchObject({ stamped: "good" });

      const error = nextEvent(active, "error", inFolder("stamp"));
      tree.write("plugins/stamp/index.ts", "export default {\n");
      expect(await error).toMatchObject({
        code: "HANDLER_INVALID",
        file: tree.path("plugins/stamp/index.ts"),
      });
      expect(await outputOf("echo")).toMatchObject({ stamped: "good" });

      const reloaded = nextEvent(active, "reloaded", named("stamp"));
      tree.write(
        "plugins/stamp/index.ts",
        taggingInterceptorFolder("stamp", "stamped", "fixed")["index.ts"]!,
      );
      await reloaded;
      expect(await outputOf("echo")).toMatchObject({ stamped: "fixed" });
    });

    it("stops the old interceptor when its manifest renames it", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/stamp", taggingInterceptorFolder("stamp", "stamped", "yes"));
      const active = await startWatcher();

      const reloaded = nextEvent(active, "reloaded", named("renamed"));
      tree.write("plugins/stamp/interceptor.json", {
        name: "renamed",
        handler: "./index.ts",
        match: { names: "none" },
      });
      await reloaded;

      expect(await outputOf("echo")).toEqual({ reply: "one", msg: "hi" });
    });

    it("stops running an interceptor whose manifest is edited to enabled: false", async () => {
      tree.writeFolder("plugins/echo", skillFolder("one"));
      tree.writeFolder("plugins/stamp", taggingInterceptorFolder("stamp", "stamped", "yes"));
      const active = await startWatcher();
      expect(await outputOf("echo")).toMatchObject({ stamped: "yes" });

      const reloaded = nextEvent(active, "reloaded", named("stamp"));
      tree.write("plugins/stamp/interceptor.json", { name: "stamp", handler: "./index.ts", enabled: false });
      await reloaded;

      expect(await outputOf("echo")).toEqual({ reply: "one", msg: "hi" });
    });
  });
});
