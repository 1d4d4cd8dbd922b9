import {
  type ContainerRuntime,
  createBwrapProvider,
  createContainerRuntime,
  SandboxRunner,
  type StartedSandbox,
} from "@skillbox/sandbox";
import { bwrapRequirement, describeWithEngine } from "@skillbox/test-helpers/engine-availability";
import { installRecordingTelemetry, type RecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { WarmPool } from "../src/warm-pool.js";
import { type LoadedContainerSkills, loadContainerSkills } from "./fixtures/container-skills.js";
import { plainSandbox } from "./plain-sandbox.js";

const GAUGE = "skillbox.sandbox.warm_pool.sandboxes";

let telemetry: RecordingTelemetry;

beforeAll(() => {
  telemetry = installRecordingTelemetry();
});

afterAll(async () => {
  await telemetry.close();
});

/** The gauge's points now, as `skill@version → ready sandboxes` (`-` for a pool without a skill). */
async function gaugePoints(): Promise<Record<string, unknown>> {
  const points = (await telemetry.collect()).filter((point) => point.name === GAUGE);
  return Object.fromEntries(
    points.map((point) => [
      point.attributes["gen_ai.tool.name"] === undefined
        ? "-"
        : `${point.attributes["gen_ai.tool.name"]}@${point.attributes["skillbox.skill.version"]}`,
      point.value,
    ]),
  );
}

/** The points that are not 0 (skills of earlier tests, whose pools closed, read 0). */
async function readyBySkill(): Promise<Record<string, unknown>> {
  return Object.fromEntries(Object.entries(await gaugePoints()).filter(([, value]) => value !== 0));
}

describe("WarmPool (skillbox.sandbox.warm_pool.sandboxes)", () => {
  /** Every sandbox the pools of a test started: each is killed and gone when the test ends. */
  let started: StartedSandbox[];
  let pools: WarmPool[];

  beforeEach(() => {
    started = [];
    pools = [];
  });

  afterEach(async () => {
    await Promise.all(pools.map((pool) => pool.close()));
    await Promise.all(started.map((sandbox) => sandbox.kill()));
    await Promise.all(started.map((sandbox) => sandbox.result.catch(() => {})));
  });

  /** A pool of plain processes that wait on stdin (a sandbox's warm state), for `skill` if given. */
  function poolOf(size: number, skill?: { name: string; version: string }): WarmPool {
    const pool = new WarmPool(
      size,
      async () => {
        const sandbox = plainSandbox(`warm-${started.length}`, "process.stdin.resume();");
        started.push(sandbox);
        return sandbox;
      },
      (error) => {
        throw error;
      },
      skill,
    );
    pools.push(pool);
    return pool;
  }

  it("reports each pool's ready sandboxes under its skill, and a taken one no more", async () => {
    const echo = poolOf(2, { name: "echo", version: "1.0.0" });
    const other = poolOf(1, { name: "other", version: "2.1.0" });
    await Promise.all([echo.ready(), other.ready()]);

    expect(await readyBySkill()).toEqual({ "echo@1.0.0": 2, "other@2.1.0": 1 });

    expect(echo.take()).toBeDefined();
    expect(await readyBySkill()).toEqual({ "echo@1.0.0": 1, "other@2.1.0": 1 });
  });

  it("sums the pools of one skill, and reports a pool without a skill with no attributes", async () => {
    const first = poolOf(1, { name: "echo", version: "1.0.0" });
    const second = poolOf(2, { name: "echo", version: "1.0.0" });
    const unnamed = poolOf(1);
    await Promise.all([first.ready(), second.ready(), unnamed.ready()]);

    expect(await readyBySkill()).toEqual({ "echo@1.0.0": 3, "-": 1 });
  });

  it("does not count a sandbox that ended while it waited", async () => {
    const pool = poolOf(2, { name: "echo", version: "1.0.0" });
    await pool.ready();
    const [ended] = started;
    await ended?.kill();
    await ended?.result.catch(() => {});

    expect(await readyBySkill()).toEqual({ "echo@1.0.0": 1 });
  });

  it("stops reporting a pool once it is closed", async () => {
    const closing = poolOf(1, { name: "closing", version: "1.0.0" });
    const open = poolOf(1, { name: "open", version: "1.0.0" });
    await Promise.all([closing.ready(), open.ready()]);
    expect(await readyBySkill()).toEqual({ "closing@1.0.0": 1, "open@1.0.0": 1 });

    await closing.close();
    expect(await gaugePoints()).toMatchObject({ "closing@1.0.0": 0, "open@1.0.0": 1 });

    await open.close();
    expect(await gaugePoints()).toMatchObject({ "closing@1.0.0": 0, "open@1.0.0": 0 });
    expect(await readyBySkill()).toEqual({});
  });
});

describeWithEngine("createContainerRuntime warm pool gauge (bwrap)", bwrapRequirement(), () => {
  const runner = new SandboxRunner({ provider: createBwrapProvider() });
  let runtime: ContainerRuntime;
  let host: TemporaryHost;
  let skills: LoadedContainerSkills;

  beforeEach(async () => {
    runtime = createContainerRuntime({ runner });
    host = createTemporaryHost({ runtimes: [runtime] });
    skills = await loadContainerSkills(host);
  });

  afterEach(async () => {
    await host.dispose();
    skills.cleanup();
    await runner.killAll();
  });

  it("reports the skill's warm sandbox, the refill after an execution, and nothing once the host closed", async () => {
    const skill = host.registry.getSkill("marker");
    if (skill === undefined) throw new Error("the marker fixture did not load");

    await runtime.warmUp(skill);
    expect(await readyBySkill()).toEqual({ "marker@1.0.0": 1 });

    const execution = await host.executor.execute("marker", {});
    expect(execution.status).toBe("success");
    // The execution took the warm sandbox; the pool refills by itself.
    await vi.waitFor(async () => expect(await readyBySkill()).toEqual({ "marker@1.0.0": 1 }), {
      timeout: 10_000,
      interval: 50,
    });

    await host.close();
    expect(await gaugePoints()).toMatchObject({ "marker@1.0.0": 0 });
    expect(await readyBySkill()).toEqual({});
  });

  it("makes one pool for a skill first used by two callers at once", async () => {
    const skill = host.registry.getSkill("marker");
    if (skill === undefined) throw new Error("the marker fixture did not load");

    await Promise.all([runtime.warmUp(skill), runtime.warmUp(skill)]);

    // A second pool would warm a sandbox of its own that nothing ever takes or closes.
    expect(await readyBySkill()).toEqual({ "marker@1.0.0": 1 });
  });
});
