import { watchSkills } from "@skillbox/loader";
import type { LoaderActivity } from "@skillbox/server";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, describe, expect, it } from "vitest";
import { loaderActivitySource } from "../src/server/loader-activity-source.js";
import { echoFolder } from "./cli-fixtures.js";

let tree: TemporaryTree;
let host: TemporaryHost;
let watcher: ReturnType<typeof watchSkills>;

afterEach(async () => {
  await watcher?.close();
  await host?.dispose();
  tree?.cleanup();
});

describe("loaderActivitySource", () => {
  it("holds an edit made before the server listened and publishes it after the first load", async () => {
    tree = createTemporaryTree();
    tree.linkPackages("@skillbox/core");
    tree.writeFolder("plugins/echo", echoFolder());
    host = createTemporaryHost();
    watcher = watchSkills({
      dirs: [tree.path("plugins")],
      npm: false,
      registry: host.registry,
      executor: host.executor,
    });
    const firstLoad = await watcher.ready();
    const activity = loaderActivitySource(watcher.loader, { owner: undefined, firstLoad });

    // The handler breaks while the host still warms sandboxes: nobody listens to the feed yet.
    const failed = new Promise((resolve) => watcher.on("error", resolve));
    tree.write("plugins/echo/index.ts", "export default function handler( {\n");
    await failed;
    const seen: LoaderActivity[] = [];
    activity.feed.subscribe((entry) => seen.push(entry));
    activity.open();

    expect(seen.map((entry) => entry.type)).toEqual(["loaded", "load-error"]);
    expect(seen[1]).toMatchObject({ failure: { file: expect.stringMatching(/plugins\/echo\/index\.ts$/) } });
    // Live from then on.
    const fixed = new Promise((resolve) => watcher.on("reloaded", resolve));
    tree.write("plugins/echo/index.ts", "export default (input: any) => ({ echoed: input.msg });\n");
    await fixed;
    expect(seen.map((entry) => entry.type)).toEqual(["loaded", "load-error", "reloaded"]);
  });
});
