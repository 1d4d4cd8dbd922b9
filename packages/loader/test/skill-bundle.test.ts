import { existsSync } from "node:fs";
import { type LoadSkillsResult, loadSkills, type SkillWatcher, watchSkills } from "@skillbox/loader";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nextEvent, recordEvents, skillManifest } from "./loader-fixtures.js";

let tree: TemporaryTree;
let host: TemporaryHost;
let watcher: SkillWatcher | undefined;
const results: LoadSkillsResult[] = [];

beforeEach(() => {
  tree = createTemporaryTree();
  tree.mkdir("plugins");
  tree.linkPackages("@skillbox/core");
  host = createTemporaryHost({ worker: { maxThreads: 1 } });
});

afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
  for (const result of results.splice(0)) result.loader.close();
  await host.dispose();
  tree.cleanup();
});

/** A member whose handler replies with the bundle's shared greeting and its own word. */
function memberFolder(name: string, word: string, manifest: Record<string, unknown> = {}) {
  return {
    "skill.json": skillManifest({ name, ...manifest }),
    "index.ts": [
      'import { greeting } from "../lib/greeting.ts";',
      "interface Input { msg: string }",
      "export default function handler(input: Input) {",
      `  return { reply: \`\${greeting} ${word}\`, msg: input.msg };`,
      "}",
      "",
    ].join("\n"),
  };
}

/** `plugins/tools`: a bundle of `tools.one` and `tools.two` sharing `lib/greeting.ts`. */
function writeBundle(greeting = "hello", manifest: Record<string, unknown> = {}): void {
  tree.writeFolder("plugins/tools", {
    "package.json": { name: "@acme/tools", private: true, type: "module", skillbox: { kind: "bundle" } },
    "lib/greeting.ts": `export const greeting = ${JSON.stringify(greeting)};\n`,
    "README.md": "shared files and folders without a manifest are not packages\n",
  });
  tree.writeFolder("plugins/tools/one", memberFolder("tools.one", "one", manifest));
  tree.writeFolder("plugins/tools/two", memberFolder("tools.two", "two", manifest));
}

async function load(): Promise<LoadSkillsResult> {
  const result = await loadSkills({
    dirs: [tree.path("plugins")],
    npm: false,
    registry: host.registry,
    executor: host.executor,
  });
  results.push(result);
  return result;
}

/** Watches the tree's `plugins/` and waits until it listens (`error` events are recorded, so never unhandled). */
async function startWatcher(): Promise<SkillWatcher> {
  const started = watchSkills({
    dirs: [tree.path("plugins")],
    npm: false,
    registry: host.registry,
    executor: host.executor,
  });
  recordEvents(started);
  await started.ready();
  return started;
}

const replyOf = async (reference: string) =>
  ((await host.executor.execute(reference, { msg: "hi" })).output as { reply?: string } | null)?.reply;

describe("skill bundles", () => {
  it("registers every member of a bundle, and nothing for its shared folders", async () => {
    writeBundle();
    const report = await load();
    expect(report.failed).toEqual([]);
    expect(report.loaded.map((entry) => entry.name).sort()).toEqual(["tools.one", "tools.two"]);
    expect(report.loaded.map((entry) => entry.root).sort()).toEqual([
      tree.path("plugins/tools/one"),
      tree.path("plugins/tools/two"),
    ]);
    expect(await replyOf("tools.one")).toBe("hello one");
    expect(await replyOf("tools.two")).toBe("hello two");
  });

  it("reports a malformed bundle field naming the file and the field", async () => {
    tree.writeFolder("plugins/tools", {
      "package.json": { name: "@acme/tools", skillbox: { kind: "bundle", members: ["one"] } },
    });
    const report = await load();
    expect(report.failed).toHaveLength(1);
    expect(report.failed[0]).toMatchObject({
      code: "MANIFEST_INVALID",
      file: tree.path("plugins/tools/package.json"),
    });
    expect(report.failed[0]?.message).toContain("skillbox");
  });

  it("serves a worker member from a snapshot of the whole bundle, so its ../lib import resolves", async () => {
    writeBundle("hello", { runtime: "worker" });
    const report = await load();
    expect(report.failed).toEqual([]);
    expect(await replyOf("tools.one")).toBe("hello one");
    expect(existsSync(tree.path("plugins/tools/node_modules/.skillbox-snapshots"))).toBe(true);
    // Container runtimes mount this folder, so the snapshot and ../lib are inside the sandbox.
    expect(host.registry.getSkill("tools.one")).toMatchObject({
      metadata: { root: tree.path("plugins/tools/one") },
      code: { root: tree.path("plugins/tools") },
    });
  });

  it("hot-reloads every member when the bundle's shared code changes", async () => {
    writeBundle();
    watcher = await startWatcher();
    expect(await replyOf("tools.two")).toBe("hello two");
    const one = nextEvent(watcher, "reloaded", (payload) => payload.name === "tools.one");
    const two = nextEvent(watcher, "reloaded", (payload) => payload.name === "tools.two");
    tree.write("plugins/tools/lib/greeting.ts", 'export const greeting = "howdy";\n');
    await Promise.all([one, two]);
    await watcher.idle();
    expect(await replyOf("tools.one")).toBe("howdy one");
    expect(await replyOf("tools.two")).toBe("howdy two");
  });

  // Regression: the hash covered test/, so saving a test reloaded (and re-imported) every member.
  it("reloads no member when a test of the bundle or of a member is edited", async () => {
    writeBundle();
    tree.write("plugins/tools/test/greeting.test.ts", "export const cases = 1;\n");
    tree.write("plugins/tools/one/test/one.test.ts", "export const cases = 1;\n");
    tree.writeFolder("plugins/echo", {
      "skill.json": skillManifest(),
      "index.ts": "export default () => ({ reply: 1 });\n",
    });
    watcher = await startWatcher();
    const recorded = recordEvents(watcher);
    await watcher.idle();

    tree.write("plugins/tools/test/greeting.test.ts", "export const cases = 2;\n");
    tree.write("plugins/tools/one/test/one.test.ts", "export const cases = 2;\n");
    // A package edited after the tests: once it reloaded and the watcher is idle, the test
    // edits (seen before it) have been handled too.
    const echo = nextEvent(watcher, "reloaded", (payload) => payload.name === "echo");
    tree.write("plugins/echo/index.ts", "export default () => ({ reply: 2 });\n");
    await echo;
    await watcher.idle();

    expect(recorded.reloaded.map((payload) => payload.name)).toEqual(["echo"]);
    expect(await replyOf("tools.one")).toBe("hello one");
  });

  it("removes a member whose folder is deleted and every member when the bundle goes", async () => {
    writeBundle();
    watcher = await startWatcher();
    const removedOne = nextEvent(watcher, "removed", (payload) => payload.name === "tools.one");
    tree.remove("plugins/tools/one");
    await removedOne;
    expect(host.registry.getSkill("tools.one")).toBeUndefined();
    expect(host.registry.getSkill("tools.two")).toBeDefined();

    const removedTwo = nextEvent(watcher, "removed", (payload) => payload.name === "tools.two");
    tree.remove("plugins/tools");
    await removedTwo;
    expect(host.registry.getSkill("tools.two")).toBeUndefined();
  });

  it("keeps every member's last good version while the bundle's package.json does not parse", async () => {
    writeBundle("hello", { runtime: "worker" });
    watcher = await startWatcher();
    const recorded = recordEvents(watcher);
    await watcher.idle();
    const broken = nextEvent(watcher, "error", (payload) => payload.root === tree.path("plugins/tools"));
    tree.write("plugins/tools/package.json", '{ "name": "@acme/tools", "skillbox": { "kind": "bund');
    await broken;
    await watcher.idle();

    expect(recorded.reloaded).toEqual([]);
    expect(recorded.removed).toEqual([]);
    expect(host.registry.getSkill("tools.one")?.code).toMatchObject({
      root: tree.path("plugins/tools"),
    });
    expect(await replyOf("tools.one")).toBe("hello one");

    const fixed = nextEvent(watcher, "reloaded", (payload) => payload.name === "tools.two");
    tree.write("plugins/tools/lib/greeting.ts", 'export const greeting = "howdy";\n');
    tree.write(
      "plugins/tools/package.json",
      JSON.stringify({ name: "@acme/tools", private: true, type: "module", skillbox: { kind: "bundle" } }),
    );
    await fixed;
    await watcher.idle();
    expect(await replyOf("tools.two")).toBe("howdy two");
  });

  it("keeps every member's last good version across a restart while the bundle's package.json does not parse", async () => {
    writeBundle();
    expect((await load()).failed).toEqual([]);
    tree.write("plugins/tools/package.json", '{ "name": "@acme/tools", "skillbox": { "kind": "bund');

    const restarted = await load();
    expect(restarted.failed).toHaveLength(1);
    expect(restarted.failed[0]).toMatchObject({ code: "MANIFEST_INVALID", root: tree.path("plugins/tools") });
    expect(restarted.removed).toEqual([]);
    expect(await replyOf("tools.one")).toBe("hello one");
    expect(await replyOf("tools.two")).toBe("hello two");
  });
});
