import { loadSkills } from "@skillbox/loader";
import { installRecordingTelemetry, type RecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

let tree: TemporaryTree;
let host: TemporaryHost;
let telemetry: RecordingTelemetry | undefined;

beforeEach(() => {
  tree = createTemporaryTree();
  tree.writeFolder("plugins/bad", { "skill.json": "{" });
  host = createTemporaryHost();
});

afterEach(async () => {
  await telemetry?.close();
  telemetry = undefined;
  await host.dispose();
  tree.cleanup();
});

const load = async () => {
  const { loader, failed } = await loadSkills({
    dirs: [tree.path("plugins")],
    npm: false,
    registry: host.registry,
    executor: host.executor,
  });
  loader.close();
  return failed;
};

describe("loader metrics (SDK installed after the first load)", () => {
  // The metrics API has no proxy provider: instruments made before the SDK was installed would
  // stay no-ops for the life of the process.
  it("counts on the SDK the application installed after the loader first recorded", async () => {
    expect(await load()).toHaveLength(1);
    telemetry = installRecordingTelemetry();

    expect(await load()).toHaveLength(1);

    const points = (await telemetry.collect()).filter((point) => point.name === "skillbox.load_errors");
    expect(points).toEqual([
      {
        name: "skillbox.load_errors",
        attributes: { "skillbox.package.kind": "skill", "skillbox.error.code": "MANIFEST_INVALID" },
        value: 1,
      },
    ]);
  });
});
