import { createSkillHost, type SkillHost } from "@skillbox/core";
import { type LoadSkillsResult, loadSkills, type SkillLoaderOptions } from "@skillbox/loader";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { skillFolder } from "./loader-fixtures.js";

let tree: TemporaryTree;
let databasePath: string;
const hosts: SkillHost[] = [];
const results: LoadSkillsResult[] = [];

beforeEach(() => {
  tree = createTemporaryTree();
  databasePath = tree.path("data", "skillbox.db");
  tree.writeFolder("folder-a/x", skillFolder("x", { name: "x" }));
  tree.writeFolder("folder-a/y", skillFolder("y", { name: "y" }));
  tree.writeFolder("folder-b/z", skillFolder("z", { name: "z" }));
});

afterEach(async () => {
  for (const result of results.splice(0)) result.loader.close();
  for (const host of hosts.splice(0)) await host.close();
  tree.cleanup();
});

/** A host on the test's database file, as one run of a process would open it. */
function openHost(): SkillHost {
  const host = createSkillHost({
    database: databasePath,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  hosts.push(host);
  return host;
}

async function load(host: SkillHost, options: SkillLoaderOptions): Promise<LoadSkillsResult> {
  const result = await loadSkills({
    npm: false,
    registry: host.registry,
    executor: host.executor,
    ...options,
  });
  results.push(result);
  return result;
}

/** Closes a run: its loader and its host, leaving the database file behind. */
async function closeRun(host: SkillHost): Promise<void> {
  for (const result of results.splice(0)) result.loader.close();
  hosts.splice(hosts.indexOf(host), 1);
  await host.close();
}

const names = (host: SkillHost) => host.registry.list().map((skill) => skill.name);

describe("skills of folders a host is not configured with", () => {
  it("are not served after a restart with other folders, while skills registered from code are", async () => {
    const first = openHost();
    expect((await load(first, { dirs: [tree.path("folder-a")] })).loaded).toHaveLength(2);
    await closeRun(first);

    const second = openHost();
    second.registry.register({ name: "from-code", version: "1.0.0", handler: "from-code" });
    const report = await load(second, { dirs: [tree.path("folder-b")] });

    expect(report.loaded.map((entry) => entry.name)).toEqual(["z"]);
    expect(second.registry.resolveVersion("x")).toBeNull();
    expect(second.registry.resolveVersion("y")).toBeNull();
    await expect(second.executor.execute("x", { msg: "hi" })).rejects.toMatchObject({
      code: "SKILL_NOT_FOUND",
    });
    expect(names(second).sort()).toEqual(["from-code", "z"]);
    expect((await second.executor.execute("z", { msg: "hi" })).output).toEqual({ reply: "z", msg: "hi" });
  });

  it("are served again by a run configured with their folder", async () => {
    const first = openHost();
    await load(first, { dirs: [tree.path("folder-a")] });
    await closeRun(first);
    const second = openHost();
    await load(second, { dirs: [tree.path("folder-b")] });
    await closeRun(second);

    const third = openHost();
    await load(third, { dirs: [tree.path("folder-a"), tree.path("folder-b")] });

    expect(names(third).sort()).toEqual(["x", "y", "z"]);
  });

  it("stay served by a process that shares the database and is configured with them", async () => {
    const first = openHost();
    await load(first, { dirs: [tree.path("folder-a")] });
    const second = openHost();

    await load(second, { dirs: [tree.path("folder-b")] });

    expect(names(second)).toEqual(["z"]);
    // The other process's rows were hidden here, not deleted: the first process still serves them.
    expect(names(first).sort()).toEqual(["x", "y"]);
    expect((await first.executor.execute("x", { msg: "hi" })).output).toEqual({ reply: "x", msg: "hi" });
  });

  it("serves both versions of a skill whose folders are both configured, and neither once neither is", async () => {
    tree.writeFolder("folder-a/x-2", skillFolder("x2", { name: "x", version: "2.0.0" }));
    const first = openHost();
    await load(first, { dirs: [tree.path("folder-a")] });
    expect(first.registry.getSkillVersions("x").map((skill) => skill.version)).toEqual(["2.0.0", "1.0.0"]);
    await closeRun(first);

    const second = openHost();
    await load(second, { dirs: [tree.path("folder-b")] });

    expect(second.registry.getSkillVersions("x")).toEqual([]);
  });
});

describe("a configured folder that does not exist", () => {
  it("is a warning naming it, and its skills from earlier runs are not served", async () => {
    const first = openHost();
    await load(first, { dirs: [tree.path("folder-a")] });
    await closeRun(first);

    const second = openHost();
    const report = await load(second, { dirs: [tree.path("does-not-exist")] });

    expect(report.warnings).toEqual([
      {
        code: "FOLDER_NOT_FOUND",
        folder: tree.path("does-not-exist"),
        message: expect.stringContaining(tree.path("does-not-exist")),
      },
    ]);
    expect(report.loaded).toEqual([]);
    expect(names(second)).toEqual([]);
  });

  it("unregisters the skills it held once it is deleted", async () => {
    const first = openHost();
    const { loader } = await load(first, { dirs: [tree.path("folder-a")] });

    tree.remove("folder-a");
    const report = await loader.loadAll();

    expect(report.removed.map((entry) => entry.name).sort()).toEqual(["x", "y"]);
    expect(report.warnings.map((warning) => warning.folder)).toEqual([tree.path("folder-a")]);
    expect(names(first)).toEqual([]);
  });
});
