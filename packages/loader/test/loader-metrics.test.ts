import { type SkillWatcher, watchSkills } from "@skillbox/loader";
import {
  installRecordingTelemetry,
  type MetricPoint,
  type RecordingTelemetry,
} from "@skillbox/test-helpers/telemetry";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  nextEvent,
  recordEvents,
  replyHandler,
  skillFolder,
  taggingInterceptorFolder,
} from "./loader-fixtures.js";

let telemetry: RecordingTelemetry;
let tree: TemporaryTree;
let host: TemporaryHost;
let watcher: SkillWatcher | undefined;

beforeAll(() => {
  telemetry = installRecordingTelemetry();
});

afterAll(async () => {
  await telemetry.close();
});

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

async function startWatcher(): Promise<SkillWatcher> {
  watcher = watchSkills({
    dirs: [tree.path("plugins")],
    npm: false,
    registry: host.registry,
    executor: host.executor,
  });
  // Also keeps `error` listened to, as a host does.
  recordEvents(watcher);
  await watcher.ready();
  await watcher.idle();
  return watcher;
}

/**
 * The metric's points as `attributes → value`, counted since the file's SDK was installed
 * (cumulative): each test reads the change it caused against a reading taken before.
 */
async function pointsOf(name: string): Promise<Map<string, number>> {
  const points = (await telemetry.collect()).filter((point: MetricPoint) => point.name === name);
  return new Map(points.map((point) => [JSON.stringify(point.attributes), point.value as number]));
}

/** What each attribute set of `name` gained between `before` and now (attribute sets that did not change left out). */
async function gainedSince(name: string, before: Map<string, number>): Promise<Record<string, number>> {
  const gained: Record<string, number> = {};
  for (const [attributes, value] of await pointsOf(name)) {
    const delta = value - (before.get(attributes) ?? 0);
    if (delta !== 0) gained[attributes] = delta;
  }
  return gained;
}

const key = (attributes: Record<string, string>) => JSON.stringify(attributes);

describe("loader metrics", () => {
  it("counts each hot reload of a watched folder in skillbox.reloads, by outcome and package kind", async () => {
    tree.writeFolder("plugins/echo", skillFolder("old"));
    const active = await startWatcher();
    const before = await pointsOf("skillbox.reloads");

    const reloaded = nextEvent(active, "reloaded");
    tree.write("plugins/echo/index.ts", replyHandler("new"));
    await reloaded;
    const loaded = nextEvent(active, "loaded");
    tree.writeFolder("plugins/tagger", taggingInterceptorFolder("tagger", "tag", "yes"));
    await loaded;
    const removed = nextEvent(active, "removed");
    tree.remove("plugins/echo");
    await removed;
    await active.idle();

    expect(await gainedSince("skillbox.reloads", before)).toEqual({
      [key({ "skillbox.reload.outcome": "reloaded", "skillbox.package.kind": "skill" })]: 1,
      [key({ "skillbox.reload.outcome": "loaded", "skillbox.package.kind": "interceptor" })]: 1,
      [key({ "skillbox.reload.outcome": "removed", "skillbox.package.kind": "skill" })]: 1,
    });
  });

  it("does not count the first load as a reload", async () => {
    const before = await pointsOf("skillbox.reloads");
    tree.writeFolder("plugins/echo", skillFolder("one"));
    tree.writeFolder("plugins/tagger", taggingInterceptorFolder("tagger", "tag", "yes"));

    const report = await (await startWatcher()).ready();

    expect(report.loaded).toHaveLength(2);
    expect(await gainedSince("skillbox.reloads", before)).toEqual({});
  });

  it("counts a broken skill and a broken interceptor plugin in skillbox.load_errors, at start-up and on reload", async () => {
    tree.writeFolder("plugins/bad", { "skill.json": "{" });
    tree.writeFolder("plugins/guard", {
      ...taggingInterceptorFolder("guard", "tag", "yes"),
      "index.ts": "export default {",
    });
    const errorsBefore = await pointsOf("skillbox.load_errors");
    const reloadsBefore = await pointsOf("skillbox.reloads");

    const active = await startWatcher();
    expect(await gainedSince("skillbox.load_errors", errorsBefore)).toEqual({
      [key({ "skillbox.package.kind": "skill", "skillbox.error.code": "MANIFEST_INVALID" })]: 1,
      [key({ "skillbox.package.kind": "interceptor", "skillbox.error.code": "HANDLER_INVALID" })]: 1,
    });

    // A good skill broken by an edit: the last good version keeps serving, and the failure counts.
    const loaded = nextEvent(active, "loaded");
    tree.writeFolder("plugins/echo", skillFolder("good"));
    await loaded;
    const failed = nextEvent(active, "error", (failure) => failure.root === tree.path("plugins/echo"));
    tree.write("plugins/echo/index.ts", "export default function (");
    await failed;
    await active.idle();

    expect(await gainedSince("skillbox.load_errors", errorsBefore)).toEqual({
      [key({ "skillbox.package.kind": "skill", "skillbox.error.code": "MANIFEST_INVALID" })]: 1,
      [key({ "skillbox.package.kind": "skill", "skillbox.error.code": "HANDLER_INVALID" })]: 1,
      [key({ "skillbox.package.kind": "interceptor", "skillbox.error.code": "HANDLER_INVALID" })]: 1,
    });
    expect(await gainedSince("skillbox.reloads", reloadsBefore)).toEqual({
      [key({ "skillbox.reload.outcome": "loaded", "skillbox.package.kind": "skill" })]: 1,
      [key({ "skillbox.reload.outcome": "failed", "skillbox.package.kind": "skill" })]: 1,
    });
  });
});
