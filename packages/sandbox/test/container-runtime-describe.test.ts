import { spawnSync } from "node:child_process";
import { homedir, tmpdir } from "node:os";
import type { SkillRegistration } from "@skillbox/core";
import {
  type ContainerRuntime,
  createBwrapProvider,
  createContainerRuntime,
  createPodmanProvider,
  SandboxRunner,
} from "@skillbox/sandbox";
import {
  bwrapRequirement,
  describeWithEngine,
  podmanRequirement,
  removeLeftoverContainers,
  TEST_IMAGE,
} from "@skillbox/test-helpers/engine-availability";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { nodeCommand } from "./isolation-probes.js";

/** A podman start takes 0.3–1 s here, slower when the machine is shared. */
const START_TIMEOUT = { timeout: 30_000, interval: 100 };

/** A command skill of `owner` that keeps one warm sandbox (it reads stdin and prints `{}`). */
function warmSkill(owner: string): SkillRegistration {
  return {
    name: "warm",
    version: "1.0.0",
    input: { type: "object" },
    handler: "unused-by-command-skills",
    runtime: "container",
    apiKeyId: owner,
    sandbox: {
      image: TEST_IMAGE,
      command: nodeCommand('process.stdin.resume().on("end", () => console.log("{}"));'),
      warmPool: 1,
    },
  };
}

describeWithEngine("ContainerRuntime.describe (podman)", podmanRequirement(), () => {
  let runner: SandboxRunner;
  let runtime: ContainerRuntime;
  let host: TemporaryHost;

  beforeEach(() => {
    // A runner per test: whether its provider is resolved yet is part of what is described.
    runner = new SandboxRunner({ provider: createPodmanProvider(), removeOrphansOnStart: false });
    runtime = createContainerRuntime({ runner, defaultImage: TEST_IMAGE, warmPoolSize: 0 });
    host = createTemporaryHost({ runtimes: [runtime] });
  });

  afterEach(async () => {
    await host.dispose();
    await runner.killAll();
    removeLeftoverContainers();
  });

  it("tells the engine and its version once known, the default image, network and limits, without host paths", async () => {
    const expectedVersion = spawnSync("podman", ["version", "--format", "{{.Server.Version}}"], {
      encoding: "utf8",
    }).stdout.trim();

    const unresolved = runtime.describe();
    await runner.getProvider();
    const first = runtime.describe();
    await vi.waitFor(
      () => expect(runtime.describe().details.engineVersion).toBe(expectedVersion),
      START_TIMEOUT,
    );
    const known = runtime.describe();

    // Before anything needed the engine, the runtime does not go looking for it.
    expect(unresolved.details).toMatchObject({ engine: null, engineVersion: null });
    expect(first.details).toMatchObject({ engine: "podman", engineVersion: null });
    expect(known).toEqual({
      details: {
        isolation: "sandbox",
        engine: "podman",
        engineVersion: expectedVersion,
        image: TEST_IMAGE,
        network: "none",
        memoryMb: null,
        cpus: null,
        pidsLimit: 128,
        readOnlyRoot: true,
        user: "65534:65534",
        tmpfsSizeMb: 64,
        maxOutputBytes: 1024 * 1024,
        warmPoolSize: 0,
        sandboxes: 0,
      },
      pools: [],
    });
    const text = JSON.stringify(known);
    expect(text).not.toContain(tmpdir());
    expect(text).not.toContain(homedir());
    expect(text).not.toContain(host.directory);
  });

  it("asks the engine its version once, however often it is described: describe() spawns nothing per call", async () => {
    const podman = createPodmanProvider();
    const askVersion = podman.engineVersion?.bind(podman);
    let asked = 0;
    const counting = new SandboxRunner({
      provider: {
        ...podman,
        engineVersion: () => {
          asked += 1;
          return askVersion?.() ?? Promise.resolve(undefined);
        },
      },
      removeOrphansOnStart: false,
    });
    const described = createContainerRuntime({ runner: counting });

    await counting.getProvider();
    for (let call = 0; call < 20; call += 1) described.describe();
    await vi.waitFor(
      () => expect(described.describe().details.engineVersion).toBeTypeOf("string"),
      START_TIMEOUT,
    );
    for (let call = 0; call < 20; call += 1) described.describe();

    expect(asked).toBe(1);
  });

  it("shows each skill version's warm pool, and the executor shows it only to owners who can see the skill", async () => {
    const skill = host.registry.register(warmSkill("alice"));

    await runtime.warmUp(skill);
    const described = runtime.describe();
    const containerPools = (owner: string) =>
      host.executor.describeRuntimes({ owner }).find((entry) => entry.name === "container")?.pools;

    expect(described.pools).toEqual([
      { name: "warm@1.0.0", skillId: skill.id, size: 1, idle: 1, busy: 0, max: 1 },
    ]);
    expect(described.details.sandboxes).toBe(1);
    expect(containerPools("alice")).toEqual(described.pools);
    expect(containerPools("bob")).toEqual([]);
  });
});

describeWithEngine("ContainerRuntime.describe (bwrap)", bwrapRequirement(), () => {
  it("names bwrap and its version, and no image: bwrap runs on the host's own root", async () => {
    const runner = new SandboxRunner({ provider: createBwrapProvider(), removeOrphansOnStart: false });
    const runtime = createContainerRuntime({ runner });

    await runner.getProvider();
    runtime.describe();
    await vi.waitFor(
      () => expect(runtime.describe().details.engineVersion).toMatch(/^\d+\.\d+/),
      START_TIMEOUT,
    );

    expect(runtime.describe().details).toMatchObject({ engine: "bwrap", image: null });
    await runtime.close?.();
  });
});
