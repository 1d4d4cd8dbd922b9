import { type SkillWatcher, watchSkills } from "@skillbox/loader";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, describe, expect, it } from "vitest";
import { createLoaderActivity } from "../src/index.js";
import { type TestApi, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();
const trees: TemporaryTree[] = [];
const watchers: SkillWatcher[] = [];

afterEach(async () => {
  for (const watcher of watchers.splice(0)) await watcher.close();
  for (const tree of trees.splice(0)) tree.cleanup();
});

/** A plugins folder with the `greet` skill and the `guard` interceptor, watched and fed to the app's activity. */
async function watchedPlugins(): Promise<{ api: TestApi; tree: TemporaryTree; watcher: SkillWatcher }> {
  const tree = createTemporaryTree();
  trees.push(tree);
  tree.linkPackages("@skillbox/core");
  tree.writeFolder("plugins/greet", {
    "skill.json": {
      name: "greet",
      version: "1.0.0",
      description: "Greets",
      input: { type: "object", properties: { msg: { type: "string" } } },
      handler: "./index.ts",
    },
    "index.ts": 'export default function handler() { return { reply: "one" }; }\n',
  });
  tree.writeFolder("plugins/guard", {
    "interceptor.json": {
      name: "guard",
      version: "1.0.0",
      handler: "./index.ts",
      order: 5,
      match: { names: ["greet*"], tags: ["demo"] },
    },
    "index.ts":
      'export default function create() { return { name: "guard", before() {}, audit(_c, entry) { return entry; } }; }\n',
  });
  const activity = createLoaderActivity();
  const api = await startApi({ activity });
  const watcher = watchSkills({
    dirs: [tree.path("plugins")],
    npm: false,
    registry: api.host.registry,
    executor: api.host.executor,
  });
  watchers.push(watcher);
  watcher.on("loaded", (entry) => activity.loaded(entry));
  watcher.on("reloaded", (entry) => activity.reloaded(entry));
  watcher.on("removed", (entry) => activity.removed(entry));
  watcher.on("error", (failure) => activity.failed(failure));
  await watcher.ready();
  return { api, tree, watcher };
}

function next(watcher: SkillWatcher, event: "error" | "reloaded"): Promise<unknown> {
  return new Promise((resolve) => watcher.once(event, resolve));
}

describe("createHttpApp: the skill view's origin and last load error", () => {
  it("shows a broken edit's file and message while the last good version serves, and clears it once fixed", async () => {
    const { api, tree, watcher } = await watchedPlugins();

    const before = await api.call("GET", "/api/skills");
    const failed = next(watcher, "error");
    tree.write("plugins/greet/index.ts", "export default function handler( {\n");
    await failed;
    const broken = await api.call("GET", "/api/skills");
    const stillServes = await api.call("POST", "/api/skills/greet/execute", { json: { input: {} } });
    const fixed = next(watcher, "reloaded");
    tree.write("plugins/greet/index.ts", 'export default function handler() { return { reply: "two" }; }\n');
    await fixed;
    const after = await api.call("GET", "/api/skills");

    // biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field.
    const greet = (body: any) => body.skills.find((skill: { name: string }) => skill.name === "greet");
    expect(greet(before.body)).toMatchObject({
      origin: { kind: "folder", package: "greet" },
      lastLoadError: null,
    });
    const error = greet(broken.body).lastLoadError as {
      file: string;
      code: string;
      message: string;
      at: string;
    };
    expect(error).toMatchObject({ file: "index.ts", code: expect.any(String) });
    expect(error.message.length).toBeGreaterThan(0);
    expect(Number.isNaN(Date.parse(error.at))).toBe(false);
    // The package folder's absolute path stays on the server.
    expect(JSON.stringify(error)).not.toContain(tree.root);
    expect(stillServes.body).toMatchObject({ status: "success", output: { reply: "one" } });
    expect(greet(after.body)).toMatchObject({ lastLoadError: null });
  });
});

describe("createHttpApp: GET /api/interceptors", () => {
  it("lists the active interceptors in order, with their match, hooks and source", async () => {
    const { api, tree, watcher } = await watchedPlugins();
    const before = await api.call("GET", "/api/interceptors");
    // The first load's packages are in its report, not in the activity: a reload is what names the folder.
    const reloaded = next(watcher, "reloaded");
    tree.write(
      "plugins/guard/index.ts",
      'export default function create() { return { name: "guard", before() {}, audit(_c, entry) { return entry; } }; }\n// edited\n',
    );
    await reloaded;
    api.host.executor.use({ name: "first", order: -10, before() {} });
    api.host.executor.use({ name: "picky", match: (skill) => skill.name === "x", after() {} });

    const { status, body } = await api.call("GET", "/api/interceptors");
    const failed = next(watcher, "error");
    tree.write("plugins/guard/index.ts", "export default function create( {\n");
    await failed;
    const broken = await api.call("GET", "/api/interceptors");

    expect(before.body.interceptors.map((entry: { name: string }) => entry.name)).toEqual(["guard"]);
    // The last good version keeps guarding; the view names the failure.
    const guard = broken.body.interceptors.find((entry: { name: string }) => entry.name === "guard");
    expect(guard.lastLoadError).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    expect(JSON.stringify(guard.lastLoadError)).not.toContain(tree.root);
    expect(status).toBe(200);
    expect(body.interceptors).toEqual([
      {
        name: "first",
        order: -10,
        match: { kind: "all", names: null, tags: null },
        hooks: ["before"],
        source: { kind: "code", package: null },
        lastLoadError: null,
      },
      {
        name: "picky",
        order: 0,
        match: { kind: "predicate", names: null, tags: null },
        hooks: ["after"],
        source: { kind: "code", package: null },
        lastLoadError: null,
      },
      {
        name: "guard",
        order: 5,
        match: { kind: "filter", names: ["greet*"], tags: ["demo"] },
        hooks: ["before", "audit"],
        source: { kind: "package", package: "guard" },
        lastLoadError: null,
      },
    ]);
  });

  it("answers an unknown query parameter with 400, and asks for the key like every API route", async () => {
    const api = await startApi({ apiKeys: { "alice-key": "alice" } });

    const anonymous = await api.call("GET", "/api/interceptors");
    const typo = await api.call("GET", "/api/interceptors?order=1", { key: "alice-key" });
    const empty = await api.call("GET", "/api/interceptors", { key: "alice-key" });

    expect(anonymous.status).toBe(401);
    expect(typo.status).toBe(400);
    expect(empty.body).toEqual({ interceptors: [] });
  });
});
