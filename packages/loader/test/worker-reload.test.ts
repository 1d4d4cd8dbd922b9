import { existsSync, readdirSync, readFileSync } from "node:fs";
import { type SkillWatcher, type WatchSkillsOptions, watchSkills } from "@skillbox/loader";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nextEvent, type RecordedEvents, recordEvents, skillManifest } from "./loader-fixtures.js";

let tree: TemporaryTree;
let host: TemporaryHost;
let watcher: SkillWatcher | undefined;
let events: RecordedEvents;

beforeEach(() => {
  tree = createTemporaryTree();
  tree.mkdir("plugins");
  tree.linkPackages("@skillbox/core");
  // One thread: a reload must reach the thread that already ran the old code.
  host = createTemporaryHost({ worker: { maxThreads: 1 } });
});

afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
  // Closes the executor, which destroys the worker pools.
  await host.dispose();
  tree.cleanup();
});

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

const named = (name: string) => (payload: { name: string }) => payload.name === name;
const inFolder = (folder: string) => (payload: { root: string }) =>
  payload.root === tree.path("plugins", folder);

/** A TypeScript handler that replies with `reply` and tells which thread ran it. */
function workerHandler(reply: string): string {
  return [
    'import { isMainThread, threadId } from "node:worker_threads";',
    "interface Input { msg: string }",
    "export default function handler(input: Input) {",
    `  return { reply: ${JSON.stringify(reply)}, msg: input.msg, isMainThread, threadId };`,
    "}",
    "",
  ].join("\n");
}

/** A `skill.json` with `runtime: "worker"`. */
const workerManifest = (overrides: Record<string, unknown> = {}) =>
  skillManifest({ runtime: "worker", ...overrides });

const run = (reference: string, input: unknown = { msg: "hi" }) => host.executor.execute(reference, input);

describe("watchSkills with worker skills", () => {
  it('runs a skill whose skill.json says runtime: "worker" in a worker thread', async () => {
    tree.writeFolder("plugins/echo", { "skill.json": workerManifest(), "index.ts": workerHandler("one") });
    await startWatcher();

    expect(host.registry.getSkill("echo")?.runtime).toBe("worker");
    const execution = await run("echo");
    expect(execution.error).toBeNull();
    expect(execution.output).toMatchObject({ reply: "one", msg: "hi", isMainThread: false });
    expect(execution.output.threadId).toBeGreaterThan(0);
  });

  it("runs the new code on the same worker thread after the handler is edited", async () => {
    tree.writeFolder("plugins/echo", { "skill.json": workerManifest(), "index.ts": workerHandler("old") });
    const active = await startWatcher();
    const before = await run("echo");
    expect(before.output).toMatchObject({ reply: "old", isMainThread: false });

    const reloaded = nextEvent(active, "reloaded", named("echo"));
    tree.write("plugins/echo/index.ts", workerHandler("new"));
    await reloaded;

    const after = await run("echo");
    expect(after.output).toMatchObject({ reply: "new", isMainThread: false });
    // The pool's only thread, still alive, dropped the module it had cached.
    expect(after.output.threadId).toBe(before.output.threadId);
    expect(events.error).toEqual([]);
  });

  it("runs the new code after a helper module the worker handler imports is edited", async () => {
    tree.writeFolder("plugins/echo", {
      "skill.json": workerManifest(),
      "index.ts": [
        'import { isMainThread } from "node:worker_threads";',
        'import { word } from "./lib/word.ts";',
        "export default () => ({ word, isMainThread });",
        "",
      ].join("\n"),
      "lib/word.ts": 'export const word = "old";\n',
    });
    const active = await startWatcher();
    expect((await run("echo")).output).toEqual({ word: "old", isMainThread: false });

    const reloaded = nextEvent(active, "reloaded", named("echo"));
    tree.write("plugins/echo/lib/word.ts", 'export const word = "new";\n');
    await reloaded;

    expect((await run("echo")).output).toEqual({ word: "new", isMainThread: false });
  });

  it("runs the new code of an edited .mjs worker handler and its .mjs helper", async () => {
    const files = (version: string) => ({
      "word.mjs": `export const word = "${version}";\n`,
      "index.mjs": [
        'import { isMainThread, threadId } from "node:worker_threads";',
        'import { word } from "./word.mjs";',
        `export default () => ({ reply: "${version}", word, isMainThread, threadId });`,
        "",
      ].join("\n"),
    });
    tree.writeFolder("plugins/echo", {
      "skill.json": workerManifest({ handler: "./index.mjs" }),
      ...files("old"),
    });
    const active = await startWatcher();
    const before = await run("echo");
    expect(before.output).toMatchObject({ reply: "old", word: "old", isMainThread: false });

    const reloaded = nextEvent(active, "reloaded", named("echo"));
    tree.write("plugins/echo/word.mjs", files("new")["word.mjs"]);
    tree.write("plugins/echo/index.mjs", files("new")["index.mjs"]);
    await reloaded;
    await active.idle();

    const after = await run("echo");
    expect(after.output).toMatchObject({ reply: "new", word: "new", isMainThread: false });
    expect(after.output.threadId).toBe(before.output.threadId);
    expect(events.error).toEqual([]);
  });

  it("moves a skill into a worker thread when its manifest switches runtime to worker", async () => {
    tree.writeFolder("plugins/echo", { "skill.json": skillManifest(), "index.ts": workerHandler("same") });
    const active = await startWatcher();
    expect((await run("echo")).output).toMatchObject({ isMainThread: true });

    const reloaded = nextEvent(active, "reloaded", named("echo"));
    tree.write("plugins/echo/skill.json", workerManifest());
    await reloaded;

    expect((await run("echo")).output).toMatchObject({ reply: "same", isMainThread: false });
  });

  it("applies an edited timeoutMs: the worker running a loop is stopped at the new limit", async () => {
    tree.writeFolder("plugins/spin", {
      "skill.json": workerManifest({ name: "spin", input: { type: "object" } }),
      "index.ts":
        "export default (input: { loop?: boolean }) => {\n  while (input.loop) {}\n  return 'done';\n};\n",
    });
    const active = await startWatcher();
    expect((await run("spin", {})).output).toBe("done");

    const reloaded = nextEvent(active, "reloaded", named("spin"));
    tree.write(
      "plugins/spin/skill.json",
      workerManifest({ name: "spin", input: { type: "object" }, timeoutMs: 1_000 }),
    );
    await reloaded;

    const looped = await run("spin", { loop: true });
    expect(looped.status).toBe("timeout");
    expect(looped.error?.code).toBe("TIMEOUT");
    expect(looped.error?.message).toContain("1000 ms");
    // A call can only lower a skill's timeout, so the fresh thread that replaces the stopped one
    // gets the skill's own limit to start and load the module: long enough on a loaded machine.
    const next = await run("spin", {});
    expect(next.output).toBe("done");
  });

  // A worker skill is isolated in a thread so that its code (risky, CPU-heavy, memory-hungry)
  // never runs on the host's thread: that includes the module's top-level code.
  it("never evaluates a worker skill's module on the host thread, at start-up warm-up or on reload", async () => {
    const marker = tree.path("evaluations.log");
    const handler = (reply: string) =>
      [
        'import { appendFileSync } from "node:fs";',
        'import { isMainThread } from "node:worker_threads";',
        `appendFileSync(${JSON.stringify(marker)}, isMainThread ? "main\\n" : "worker\\n");`,
        `export default () => ({ reply: ${JSON.stringify(reply)} });`,
        "",
      ].join("\n");
    tree.writeFolder("plugins/echo", { "skill.json": workerManifest(), "index.ts": handler("one") });
    const active = await startWatcher();
    await active.idle();
    expect((await run("echo")).output).toEqual({ reply: "one" });

    const reloaded = nextEvent(active, "reloaded", named("echo"));
    tree.write("plugins/echo/index.ts", handler("two"));
    await reloaded;
    expect((await run("echo")).output).toEqual({ reply: "two" });

    const evaluations = existsSync(marker) ? readFileSync(marker, "utf8").split("\n").filter(Boolean) : [];
    expect(evaluations).toContain("worker");
    expect(evaluations).not.toContain("main");
  });

  // As for inline skills (see watch-skills.test.ts, "broken edits"): a broken edit does not
  // replace the last good version.
  // Worker threads load a skill's code from disk, so unlike inline skills they cannot keep serving
  // a version whose files were overwritten; the reload still reports the broken edit (without
  // evaluating the code on the host) and keeps the registration as it was.
  it("reports a syntax error in a worker skill's handler without running it on the host", async () => {
    tree.writeFolder("plugins/echo", { "skill.json": workerManifest(), "index.ts": workerHandler("good") });
    const active = await startWatcher();
    await active.idle();
    const before = host.registry.getSkill("echo");

    const error = nextEvent(active, "error", inFolder("echo"));
    tree.write("plugins/echo/index.ts", "export default (input => {{{\n");
    expect(await error).toMatchObject({
      code: "HANDLER_INVALID",
      message: expect.stringContaining("syntax error"),
    });

    expect(host.registry.getSkill("echo")?.contentHash).toBe(before?.contentHash);
  });

  // Regression: threads loaded the handler from the package folder, so any thread that had not
  // cached the module (first use, a replaced thread) ran the broken edit.
  it("keeps serving the last good version of a worker skill after a broken edit, from a snapshot", async () => {
    tree.writeFolder("plugins/echo", { "skill.json": workerManifest(), "index.ts": workerHandler("good") });
    const active = await startWatcher();

    const error = nextEvent(active, "error", inFolder("echo"));
    tree.write("plugins/echo/index.ts", "export default (input => {{{\n");
    await error;

    const execution = await host.executor.execute("echo", { msg: "hi" });
    expect(execution.output).toMatchObject({ reply: "good", isMainThread: false });
    expect(host.registry.getSkill("echo")?.code?.modulePath).toContain(".skillbox-snapshots");
  });

  it("keeps at most two snapshots of a worker skill across reloads", async () => {
    tree.writeFolder("plugins/echo", { "skill.json": workerManifest(), "index.ts": workerHandler("v0") });
    const active = await startWatcher();
    for (const version of ["v1", "v2", "v3"]) {
      const reloaded = nextEvent(active, "reloaded", named("echo"));
      tree.write("plugins/echo/index.ts", workerHandler(version));
      await reloaded;
    }
    await active.idle();

    expect((await host.executor.execute("echo", { msg: "hi" })).output).toMatchObject({ reply: "v3" });
    const snapshots = readdirSync(tree.path("plugins/echo/node_modules/.skillbox-snapshots"));
    expect(snapshots.length).toBeLessThanOrEqual(2);
  });
});
