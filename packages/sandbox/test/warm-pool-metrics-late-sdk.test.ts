import type { StartedSandbox } from "@skillbox/sandbox";
import { installRecordingTelemetry, type RecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { afterEach, describe, expect, it } from "vitest";
import { WarmPool } from "../src/warm-pool.js";
import { plainSandbox } from "./plain-sandbox.js";

let telemetry: RecordingTelemetry | undefined;
const started: StartedSandbox[] = [];
let pool: WarmPool | undefined;

afterEach(async () => {
  await pool?.close();
  await Promise.all(started.map((sandbox) => sandbox.kill()));
  await Promise.all(started.map((sandbox) => sandbox.result.catch(() => {})));
  await telemetry?.close();
  telemetry = undefined;
});

describe("WarmPool gauge (SDK installed after the pool opened)", () => {
  // The metrics API has no proxy provider: a gauge registered before the SDK was installed would
  // never be read.
  it("is read by the SDK the application installed once the pool fills again", async () => {
    pool = new WarmPool(
      2,
      async () => {
        const sandbox = plainSandbox(`late-${started.length}`, "process.stdin.resume();");
        started.push(sandbox);
        return sandbox;
      },
      (error) => {
        throw error;
      },
      { name: "echo", version: "1.0.0" },
    );
    await pool.ready();
    telemetry = installRecordingTelemetry();

    pool.take();
    pool.fill();
    await pool.ready();

    const points = (await telemetry.collect()).filter(
      (point) => point.name === "skillbox.sandbox.warm_pool.sandboxes",
    );
    expect(points).toEqual([
      {
        name: "skillbox.sandbox.warm_pool.sandboxes",
        attributes: { "gen_ai.tool.name": "echo", "skillbox.skill.version": "1.0.0" },
        value: 2,
      },
    ]);
  });
});
