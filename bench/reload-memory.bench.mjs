// Memory across reloads: 1,000 reloads of one skill in one process (`loader.syncPackage` after
// rewriting its TypeScript handler), calling the skill after each, with heap used and RSS read
// after a full gc at 0, 250, 500, 750 and 1,000. Baseline from the same run: the same number of
// calls with no reloads. Each case runs in its own child process (started with --expose-gc) so
// neither inherits the other's heap.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { formatMb, handlerReturning, printTable, temporaryDirectory, verdict } from "./lib/fixtures.mjs";

const RELOADS = Number(process.env.BENCH_RELOADS ?? 1_000);
const CHECKPOINTS = [0, 0.25, 0.5, 0.75, 1].map((share) => Math.round(share * RELOADS));
/**
 * Heap growth per reload over the second half, beyond the baseline's, that still counts as
 * bounded. Not 0: V8 keeps some of each freshly evaluated module (its compilation cache, JIT
 * data) past a plain gc() and drops it only under memory pressure, which reads as 1–3 KB per
 * reload here; a validator or other object retained per reload reads as 10 KB and more.
 */
const TARGET_BYTES_PER_RELOAD = 4 * 1024;

if (process.argv[2] === "--child") await child(process.argv[3], process.argv[4]);
else await parent();

async function parent() {
  const temporary = temporaryDirectory("skillbox-bench-reload-memory");
  try {
    const run = (mode) => {
      const directory = join(temporary.path, mode);
      const result = spawnSync(
        process.execPath,
        ["--expose-gc", fileURLToPath(import.meta.url), "--child", mode, directory],
        {
          encoding: "utf8",
          timeout: 110_000,
          killSignal: "SIGKILL",
          env: { ...process.env, BENCH_TAG: temporary.tag },
        },
      );
      if (result.status !== 0)
        throw new Error(`${mode} child failed (${result.signal ?? result.status}): ${result.stderr}`);
      return JSON.parse(result.stdout.trim().split("\n").pop());
    };
    const baseline = run("baseline");
    const reload = run("reload");

    const half = CHECKPOINTS.indexOf(Math.round(RELOADS / 2));
    const last = CHECKPOINTS.length - 1;
    const slope = (samples, field) =>
      (samples[last][field] - samples[half][field]) / (RELOADS - CHECKPOINTS[half]);
    const heapSlope = slope(reload.samples, "heapUsed");
    const rssSlope = slope(reload.samples, "rss");
    const baselineHeapSlope = slope(baseline.samples, "heapUsed");
    const baselineRssSlope = slope(baseline.samples, "rss");
    const netHeapSlope = heapSlope - baselineHeapSlope;

    console.log(
      `memory across ${RELOADS.toLocaleString("en-US")} reloads of one skill (syncPackage + one call after each)`,
    );
    printTable([
      ["after", "heap used", "RSS", "baseline heap", "baseline RSS"],
      ...CHECKPOINTS.map((count, index) => [
        `${count} ${index === 0 ? "reloads / calls" : ""}`,
        formatMb(reload.samples[index].heapUsed),
        formatMb(reload.samples[index].rss),
        formatMb(baseline.samples[index].heapUsed),
        formatMb(baseline.samples[index].rss),
      ]),
    ]);
    const perReload = (bytes) => `${bytes >= 0 ? "+" : ""}${(bytes / 1024).toFixed(2)} KB`;
    console.log(
      `  growth per reload, last half: heap ${perReload(heapSlope)}, RSS ${perReload(rssSlope)} ` +
        `(baseline per call: heap ${perReload(baselineHeapSlope)}, RSS ${perReload(baselineRssSlope)})`,
    );
    console.log(
      `  heap growth per reload beyond baseline = ${perReload(netHeapSlope)} (target <= ${perReload(TARGET_BYTES_PER_RELOAD)}) ${verdict(netHeapSlope <= TARGET_BYTES_PER_RELOAD)}`,
    );
    console.log(
      `  reload + call: median ${reload.medianMs.toFixed(1)} ms; call alone (baseline): median ${baseline.medianMs.toFixed(2)} ms`,
    );
    console.log(
      `  (heap and RSS after gc; one child process per case; every call checked for the new version)`,
    );
  } finally {
    temporary.cleanup();
  }
}

async function child(mode, directory) {
  const { createSkillHost } = await import("@skillbox/core");
  const { SkillLoader } = await import("@skillbox/loader");
  const { writeSkillPackage } = await import("./lib/fixtures.mjs");
  const { median } = await import("./lib/measure.mjs");
  const nothing = () => {};
  const root = join(directory, "plugins", `${process.env.BENCH_TAG}-${mode}`);
  writeSkillPackage(root, { name: "counter", handlerSource: handlerReturning(0) });
  const host = createSkillHost({
    database: join(directory, "skillbox.db"),
    logger: { debug: nothing, info: nothing, warn: nothing, error: nothing },
  });
  const loader = new SkillLoader({
    dirs: [join(directory, "plugins")],
    npm: false,
    registry: host.registry,
    executor: host.executor,
  });
  const failures = [];
  loader.on("error", (failed) => failures.push(failed));
  await loader.loadAll();
  const call = async (expected) => {
    const execution = await host.executor.execute("counter", { value: 0 });
    if (execution.output !== expected) {
      throw new Error(`expected ${expected}, got ${JSON.stringify(execution)} (${JSON.stringify(failures)})`);
    }
  };
  await call(0);

  const settle = async () => {
    for (let pass = 0; pass < 4; pass++) {
      globalThis.gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const { heapUsed, rss } = process.memoryUsage();
    return { heapUsed, rss };
  };
  const samples = [await settle()];
  const durations = [];
  for (let index = 1; index <= RELOADS; index++) {
    const started = performance.now();
    if (mode === "reload") {
      writeFileSync(join(root, "index.ts"), handlerReturning(index));
      await loader.syncPackage(root);
      await call(index);
    } else {
      await call(0);
    }
    durations.push(performance.now() - started);
    if (CHECKPOINTS.includes(index)) samples.push(await settle());
  }
  loader.close();
  await host.close();
  console.log(JSON.stringify({ samples, medianMs: median(durations) }));
}
