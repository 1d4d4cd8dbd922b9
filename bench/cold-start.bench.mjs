// Cold start with 1,000 skill packages: a fresh process from its start until `loadSkills` has
// registered all of them on a fresh database, and its peak RSS; then a warm start on the same
// database with nothing changed (which must write nothing). Each start is its own child process,
// so time and RSS are that process's own. Baselines from the same run, in the same kind of child:
// node + importing @skillbox/core + opening the database, and node + reading the 1,000 manifests
// with plain fs + JSON.parse. Rounds are interleaved so that machine noise hits all cases alike.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  formatMb,
  formatMs,
  handlerReturning,
  printTable,
  temporaryDirectory,
  verdict,
  writeSkillPackage,
} from "./lib/fixtures.mjs";
import { median } from "./lib/measure.mjs";

const SKILLS = Number(process.env.BENCH_SKILLS ?? 1_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const TARGET_MS = 2_000;
const TARGET_RSS = 200 * 1024 * 1024;
const child = join(dirname(fileURLToPath(import.meta.url)), "lib", "cold-start-child.mjs");

const temporary = temporaryDirectory("skillbox-bench-cold-start");
try {
  const pluginsDir = join(temporary.path, "plugins");
  for (let index = 0; index < SKILLS; index++) {
    const number = String(index).padStart(4, "0");
    writeSkillPackage(join(pluginsDir, `${temporary.tag}-${number}`), {
      name: `bench-skill-${number}`,
      handlerSource: handlerReturning(0),
    });
  }

  const run = (...args) => {
    const result = spawnSync(process.execPath, [child, ...args], {
      encoding: "utf8",
      timeout: 60_000,
      killSignal: "SIGKILL",
    });
    if (result.status !== 0) {
      throw new Error(`child ${args[0]} failed (${result.signal ?? result.status}): ${result.stderr}`);
    }
    return JSON.parse(result.stdout.trim().split("\n").pop());
  };

  const samples = { cold: [], warm: [], host: [], manifests: [] };
  let verified;
  for (let round = 0; round < ROUNDS; round++) {
    const database = join(temporary.path, `round-${round}.db`);
    const cases = [
      ["manifests", () => run("manifests", pluginsDir)],
      ["host", () => run("host", pluginsDir, join(temporary.path, `host-${round}.db`))],
      ["cold", () => run("load", pluginsDir, database, round === 0 ? "verify" : "")],
      ["warm", () => run("load", pluginsDir, database)],
    ];
    // Rotate which baseline runs first; cold always precedes its warm start.
    const [first, second, ...starts] = round % 2 === 0 ? cases : [cases[1], cases[0], ...cases.slice(2)];
    for (const [name, start] of [first, second, ...starts]) {
      const sample = start();
      if (name === "cold" && round === 0) verified = sample.verified;
      const expected = name === "host" ? 0 : SKILLS;
      if (sample.count !== expected || (sample.registered !== undefined && sample.registered !== SKILLS)) {
        throw new Error(`${name}: expected ${SKILLS} skills, got ${JSON.stringify(sample)}`);
      }
      samples[name].push(sample);
    }
  }

  const medianOf = (name, field) => median(samples[name].map((sample) => sample[field]));
  const cold = { ms: medianOf("cold", "ms"), peakRss: medianOf("cold", "peakRss") };
  const warm = { ms: medianOf("warm", "ms"), peakRss: medianOf("warm", "peakRss") };
  const host = { ms: medianOf("host", "ms"), peakRss: medianOf("host", "peakRss") };
  const manifests = { ms: medianOf("manifests", "ms"), peakRss: medianOf("manifests", "peakRss") };
  const warmRewrites = Math.max(...samples.warm.map((sample) => sample.rewrites));
  const coldRewrites = medianOf("cold", "rewrites");

  console.log(
    `cold start, ${SKILLS.toLocaleString("en-US")} skill packages (skill.json with schemas + index.ts)`,
  );
  printTable([
    ["process start →", "time", "peak RSS", "× host time", "× host RSS"],
    ...[
      ["manifests read (fs + JSON.parse)", manifests],
      ["core imported, database open", host],
      ["loadSkills done, fresh database", cold],
      ["loadSkills done, warm database", warm],
    ].map(([label, figures]) => [
      label,
      formatMs(figures.ms),
      formatMb(figures.peakRss),
      `${(figures.ms / host.ms).toFixed(2)}x`,
      `${(figures.peakRss / host.peakRss).toFixed(2)}x`,
    ]),
  ]);
  console.log(
    `  fresh database: ${formatMs(cold.ms)} (target < ${formatMs(TARGET_MS)}) ${verdict(cold.ms < TARGET_MS)}, ` +
      `peak RSS ${formatMb(cold.peakRss)} (target < ${formatMb(TARGET_RSS)}) ${verdict(cold.peakRss < TARGET_RSS)}`,
  );
  console.log(
    `  warm database:  ${formatMs(warm.ms)} (target < ${formatMs(TARGET_MS)}) ${verdict(warm.ms < TARGET_MS)}, ` +
      `peak RSS ${formatMb(warm.peakRss)} (target < ${formatMb(TARGET_RSS)}) ${verdict(warm.peakRss < TARGET_RSS)}`,
  );
  console.log(
    `  loader cost over the host baseline: fresh +${formatMs(cold.ms - host.ms)}, +${formatMb(cold.peakRss - host.peakRss)}; ` +
      `warm +${formatMs(warm.ms - host.ms)}, +${formatMb(warm.peakRss - host.peakRss)}`,
  );
  console.log(
    `  skill rows written: fresh ${coldRewrites}, warm ${warmRewrites} (target 0 on warm) ${verdict(warmRewrites === 0)}`,
  );
  console.log(`  a loaded skill runs: ${verified ? "yes" : "NO"}`);
  console.log(`  (medians of ${ROUNDS} interleaved rounds, one child process per start)`);
} finally {
  temporary.cleanup();
}
