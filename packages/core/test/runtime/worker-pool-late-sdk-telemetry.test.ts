import { pathToFileURL } from "node:url";
import { createWorkerRuntime } from "@skillbox/core/internal";
import { handBuiltRequest, testSkill } from "@skillbox/test-helpers/runtime-request";
import { installRecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { createTemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { describe, expect, it } from "vitest";

describe("skillbox.worker_pool.threads", () => {
  it("reaches an SDK installed after the runtime was made", async () => {
    const tree = createTemporaryTree("skillbox-worker-gauge-");
    // Made first, while the metrics API's provider is still the no-op one.
    const runtime = createWorkerRuntime({ maxThreads: 1 });
    const telemetry = installRecordingTelemetry();
    try {
      const file = tree.write("handlers/echo.mjs", "export default (input) => input;\n");
      const skill = testSkill("echo", { handler: pathToFileURL(file).href, runtime: "worker" });
      await runtime.run(handBuiltRequest(skill, { n: 1 }).request);
      const points = (await telemetry.collect()).filter(
        (point) => point.name === "skillbox.worker_pool.threads",
      );
      expect(points.map((point) => [point.attributes["skillbox.worker_pool.state"], point.value])).toEqual([
        ["busy", 0],
        ["idle", 1],
      ]);
    } finally {
      await runtime.close?.();
      await telemetry.close();
      tree.cleanup();
    }
  });
});
