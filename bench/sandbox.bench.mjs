// Sandbox overhead, side by side in one run:
// 1. raw `podman run` of the test image running `node -e 0` (the exact command line the podman
//    provider builds, spawned directly) vs the same through `SandboxRunner.run`;
// 2. bare `node -e 0` vs the bwrap provider running it;
// 3. a container handler skill through the executor: cold (a sandbox started per execution) vs
//    warm pool (a pre-started sandbox with the handler loaded takes the job), each measured with
//    no other sandbox starting or stopping.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createSkillHost } from "@skillbox/core";
import { loadSkills } from "@skillbox/loader";
import {
  createBwrapProvider,
  createContainerRuntime,
  createPodmanProvider,
  resolveSandboxConfig,
  SandboxRunner,
} from "@skillbox/sandbox";
import { formatMs, printTable, silentLogger, temporaryDirectory, verdict } from "./lib/fixtures.mjs";
import { median, percentile } from "./lib/measure.mjs";

const IMAGE = `localhost/skillbox-node:${process.versions.node}`;
const PODMAN_ROUNDS = Number(process.env.BENCH_PODMAN_ROUNDS ?? 15);
const BWRAP_ROUNDS = Number(process.env.BENCH_BWRAP_ROUNDS ?? 40);
const SKILL_RUNS = Number(process.env.BENCH_SKILL_RUNS ?? 20);
const PODMAN_TARGET = 1.1;
const BWRAP_TARGET = 1.15;
const WARM_TARGET_MS = 20;
const ENGINE_SETTLE_MS = 1_500;

/** Spawns a command, closes its stdin and resolves with the wall time until it exited. */
function timeProcess(file, args, env, descriptor3) {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const stdio =
      descriptor3 === undefined ? ["pipe", "ignore", "ignore"] : ["pipe", "ignore", "ignore", "pipe"];
    const child = spawn(file, args, { env, stdio });
    if (descriptor3 !== undefined) child.stdio[3].end(descriptor3);
    child.stdin.end();
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve(performance.now() - start) : reject(new Error(`${file} exited ${code}`)),
    );
  });
}

async function timeRun(runner, command) {
  const start = performance.now();
  const result = await runner.run(IMAGE, command);
  if (result.exitCode !== 0) throw new Error(`sandbox exited ${result.exitCode}: ${result.stderr}`);
  return performance.now() - start;
}

/** Interleaves the two cases round by round so machine noise hits both alike. */
async function interleave(rounds, baseline, candidate) {
  const samples = { baseline: [], candidate: [] };
  for (let round = 0; round < rounds; round++) {
    samples.baseline.push(await baseline());
    samples.candidate.push(await candidate());
  }
  return samples;
}

const command = ["node", "-e", "0"];
const podman = createPodmanProvider();
const podmanRunner = new SandboxRunner({ provider: podman });
const bwrapRunner = new SandboxRunner({ provider: createBwrapProvider() });
const directory = temporaryDirectory("skillbox-sandbox-bench");
try {
  // --- 2. bare node vs bwrap (first: podman leaves cleanup work running after each container) ------------------------------------------------------------------
  // Also the provider's own command line spawned directly (no cgroup), to show what bwrap itself
  // costs apart from the runner.
  const bwrap = createBwrapProvider();
  const rawBwrap = () => {
    const config = resolveSandboxConfig();
    const plan = bwrap.plan({
      id: "bench",
      image: "",
      command: [process.execPath, "-e", "0"],
      env: {},
      config,
    });
    return timeProcess(plan.file, plan.args, plan.env, plan.descriptor3);
  };
  const bwrapSamples = { baseline: [], candidate: [], raw: [] };
  for (let round = 0; round < BWRAP_ROUNDS; round++) {
    bwrapSamples.baseline.push(await timeProcess(process.execPath, ["-e", "0"], { PATH: process.env.PATH }));
    bwrapSamples.raw.push(await rawBwrap());
    bwrapSamples.candidate.push(await timeRun(bwrapRunner, [process.execPath, "-e", "0"]));
  }

  // --- 1. raw podman vs SandboxRunner ---------------------------------------------------------
  const rawPlan = () =>
    podman.plan({
      id: `skillbox-bench-raw-${performance.now()}`,
      image: IMAGE,
      command,
      env: {},
      config: resolveSandboxConfig(),
    });
  await timeRun(podmanRunner, command); // warm the engine's caches for both
  const podmanSamples = await interleave(
    PODMAN_ROUNDS,
    () => {
      const plan = rawPlan();
      return timeProcess(plan.file, plan.args, plan.env);
    },
    () => timeRun(podmanRunner, command),
  );

  // --- 3. cold vs warm container skill through the executor ---------------------------------
  const skillFolder = join(directory.path, "plugins", "echo-sandboxed");
  mkdirSync(skillFolder, { recursive: true });
  const manifest = (name, warmPool) =>
    JSON.stringify({
      name,
      version: "1.0.0",
      description: "echo in a sandbox",
      input: { type: "object" },
      handler: "./index.mjs",
      runtime: "container",
      sandbox: { image: IMAGE, warmPool },
    });
  writeFileSync(join(skillFolder, "skill.json"), manifest("echo-cold", 0));
  writeFileSync(join(skillFolder, "index.mjs"), "export default (input) => input;\n");
  const warmFolder = join(directory.path, "plugins", "echo-warm");
  mkdirSync(warmFolder, { recursive: true });
  writeFileSync(join(warmFolder, "skill.json"), manifest("echo-warm", 1));
  writeFileSync(join(warmFolder, "index.mjs"), "export default (input) => input;\n");

  const runtime = createContainerRuntime({ runner: podmanRunner });
  const host = createSkillHost({
    database: join(directory.path, "bench.db"),
    runtimes: [runtime],
    logger: silentLogger(),
  });
  await loadSkills({
    registry: host.registry,
    executor: host.executor,
    dirs: [join(directory.path, "plugins")],
    npm: false,
  });
  const execute = async (name) => {
    const start = performance.now();
    const execution = await host.executor.execute(name, { n: 1 });
    if (execution.status !== "success") throw new Error(`${name}: ${JSON.stringify(execution.error)}`);
    return performance.now() - start;
  };
  const warmSkill = host.registry.resolveVersion("echo-warm", "*");
  // Each measured execution starts when nothing but the warm sandbox runs: the engine tears a
  // sandbox down in the background after its answer, which would otherwise share the CPU.
  const quiet = async (expected) => {
    while (podmanRunner.getRunningCount() > expected) await new Promise((resolve) => setTimeout(resolve, 10));
  };
  const cold = [];
  const warm = [];
  const backToBack = [];
  await execute("echo-cold");
  for (let run = 0; run < SKILL_RUNS; run++) {
    await quiet(0);
    cold.push(await execute("echo-cold"));
  }
  for (let run = 0; run < SKILL_RUNS; run++) {
    await runtime.warmUp(warmSkill);
    await quiet(1);
    // The engine keeps working for a while after a container starts or exits (conmon, `podman
    // container cleanup`), outside the runner: measure the warm path on an idle engine.
    await new Promise((resolve) => setTimeout(resolve, ENGINE_SETTLE_MS));
    warm.push(await execute("echo-warm"));
  }
  // Back to back: the previous sandbox's teardown and the pool's refill share the two cores.
  for (let run = 0; run < SKILL_RUNS; run++) {
    await runtime.warmUp(warmSkill);
    backToBack.push(await execute("echo-warm"));
  }
  await host.close();

  // --- report -------------------------------------------------------------------------------
  const podmanRatio = median(podmanSamples.candidate) / median(podmanSamples.baseline);
  const bwrapRatio = median(bwrapSamples.candidate) / median(bwrapSamples.baseline);
  const rawBwrapRatio = median(bwrapSamples.raw) / median(bwrapSamples.baseline);
  console.log(`sandboxes (${IMAGE}, node -e 0; medians of interleaved rounds)`);
  printTable([
    ["", "baseline", "skillbox", "ratio", "target", ""],
    [
      `podman run vs sandboxRunner.run (${PODMAN_ROUNDS} rounds)`,
      formatMs(median(podmanSamples.baseline)),
      formatMs(median(podmanSamples.candidate)),
      `${podmanRatio.toFixed(2)}x`,
      `<= ${PODMAN_TARGET}x`,
      verdict(podmanRatio <= PODMAN_TARGET),
    ],
    [
      `bare node vs bwrap provider (${BWRAP_ROUNDS} rounds)`,
      formatMs(median(bwrapSamples.baseline)),
      formatMs(median(bwrapSamples.candidate)),
      `${bwrapRatio.toFixed(2)}x`,
      `<= ${BWRAP_TARGET}x`,
      verdict(bwrapRatio <= BWRAP_TARGET),
    ],
    [
      "  of which bwrap itself (its command line, spawned raw)",
      formatMs(median(bwrapSamples.baseline)),
      formatMs(median(bwrapSamples.raw)),
      `${rawBwrapRatio.toFixed(2)}x`,
      "(info)",
      "",
    ],
  ]);
  console.log(`container skill through the executor (podman, ${SKILL_RUNS} runs each)`);
  printTable([
    ["", "p50", "p90", "target", ""],
    ["cold: a sandbox per execution", formatMs(median(cold)), formatMs(percentile(cold, 90)), "(info)", ""],
    [
      "warm pool: pre-started sandbox",
      formatMs(median(warm)),
      formatMs(percentile(warm, 90)),
      `p50 < ${WARM_TARGET_MS} ms`,
      verdict(median(warm) < WARM_TARGET_MS),
    ],
    [
      "warm pool, back to back (teardown + refill running)",
      formatMs(median(backToBack)),
      formatMs(percentile(backToBack, 90)),
      "(info)",
      "",
    ],
  ]);
} finally {
  await podmanRunner.killAll();
  await bwrapRunner.killAll();
  directory.cleanup();
}
