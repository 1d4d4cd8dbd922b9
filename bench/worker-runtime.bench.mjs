// Worker runtime overhead: a no-op `runtime: "worker"` skill (audit trail on) against raw tinypool
// running the same no-op with the same thread count — latency at concurrency 1, throughput at
// concurrency 32 — and how fast a timed-out CPU loop is stopped and its thread replaced. The
// targets are against raw tinypool plus the two durable SQLite writes of an audit row (INSERT
// before, UPDATE after; same schema and pragmas): the floor for an audited execution. The ratios
// to raw tinypool alone, which keeps no audit trail, are printed for information.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { createSkillHost, defineInterceptor } from "@skillbox/core";
import { createWorkerRuntime } from "@skillbox/core/internal";
import { Tinypool } from "tinypool";
import { printTable, silentLogger } from "./lib/fixtures.mjs";
import { concurrentRate, formatRate, median, percentile } from "./lib/measure.mjs";
import { createRawAuditFloor } from "./lib/raw-audit-floor.mjs";

const LATENCY_CALLS = Number(process.env.BENCH_LATENCY_CALLS ?? 2_000);
const THROUGHPUT_CALLS = Number(process.env.BENCH_THROUGHPUT_CALLS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const TIMEOUT_REPETITIONS = Number(process.env.BENCH_TIMEOUT_REPETITIONS ?? 7);
const THREADS = 2;
const CONCURRENCY = 32;
const SPIN_TIMEOUT_MS = 100;

// The targets compare against raw tinypool plus the same audit rows (the floor of an audited
// execution); the ratios to raw tinypool alone, which writes no audit trail, are for information.
const LATENCY_TARGET = 1.3;
const THROUGHPUT_TARGET = 0.9;

const NOOP_SOURCE = "export default function noop(input) {\n  return input;\n}\n";
const WHOAMI_SOURCE =
  'import { threadId } from "node:worker_threads";\n\nexport default function whoami() {\n  return { threadId };\n}\n';
// Writes the id of the thread it runs on, then never returns.
const SPIN_SOURCE =
  'import { writeFileSync } from "node:fs";\nimport { threadId } from "node:worker_threads";\n\n' +
  "export default function spin(input) {\n  writeFileSync(input.marker, String(threadId));\n" +
  "  while (true) Math.random();\n}\n";

const directory = mkdtempSync(join(tmpdir(), "skillbox-worker-bench-"));
const cleanups = [];
try {
  const file = (name, source) => {
    const path = join(directory, name);
    writeFileSync(path, source);
    return path;
  };
  const noopFile = file("noop.mjs", NOOP_SOURCE);
  const rawNoopFile = file("raw-noop.mjs", NOOP_SOURCE);
  const whoamiFile = file("whoami.mjs", WHOAMI_SOURCE);
  const spinFile = file("spin.mjs", SPIN_SOURCE);

  // --- latency and throughput -------------------------------------------------------------
  const host = createSkillHost({
    database: join(directory, "skillbox.db"),
    logger: silentLogger(),
    worker: { maxThreads: THREADS },
  });
  cleanups.push(() => host.close());
  host.registry.register(workerSkill("noop", noopFile));
  const pool = new Tinypool({ filename: pathToFileURL(rawNoopFile).href, maxThreads: THREADS });
  cleanups.push(() => pool.destroy());

  const input = { value: 1 };
  const skillbox = async () => {
    const execution = await host.executor.execute("noop", input);
    if (execution.status !== "success")
      throw new Error(`noop ended ${execution.status}: ${execution.error?.message}`);
  };
  const raw = () => pool.run(input);

  const floor = createRawAuditFloor(join(directory, "floor.db"));
  cleanups.push(() => floor.close());
  const rawAudited = async () => {
    const rowid = floor.start(JSON.stringify(input));
    const output = await pool.run(input);
    floor.finish(rowid, JSON.stringify(output));
  };

  // Warm-up: start both threads of each pool, load the handler in each, warm the JIT.
  for (let index = 0; index < 3; index++) {
    await concurrentRate(2_000, CONCURRENCY, skillbox);
    await concurrentRate(2_000, CONCURRENCY, raw);
    await latencies(500, skillbox);
    await latencies(500, raw);
    await latencies(500, rawAudited);
  }

  const cases = {
    rawLatency: () => latencies(LATENCY_CALLS, raw),
    floorLatency: () => latencies(LATENCY_CALLS, rawAudited),
    skillboxLatency: () => latencies(LATENCY_CALLS, skillbox),
    rawThroughput: () => concurrentRate(THROUGHPUT_CALLS, CONCURRENCY, raw),
    floorThroughput: () => concurrentRate(THROUGHPUT_CALLS, CONCURRENCY, rawAudited),
    skillboxThroughput: () => concurrentRate(THROUGHPUT_CALLS, CONCURRENCY, skillbox),
  };
  const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run] of Object.entries(cases)) samples[name].push(await run());
  }
  const latency = (name) => ({
    median: median(samples[name].map((round) => round.median)),
    p99: median(samples[name].map((round) => round.p99)),
  });
  const rawLatency = latency("rawLatency");
  const skillboxLatency = latency("skillboxLatency");
  const floorLatency = latency("floorLatency");
  const rawThroughput = median(samples.rawThroughput);
  const floorThroughput = median(samples.floorThroughput);
  const skillboxThroughput = median(samples.skillboxThroughput);
  const executions = await host.executor.countExecutions({ skill: "noop", status: "success" });

  // --- timeout: stop the looping thread, replace it ---------------------------------------
  // One thread, so the execution after the timeout cannot land on a surviving warm thread: it
  // has to wait for a replacement.
  const workerRuntime = createWorkerRuntime({ maxThreads: 1 });
  const timeoutHost = createSkillHost({
    database: join(directory, "timeout.db"),
    logger: silentLogger(),
    runtimes: [workerRuntime],
  });
  cleanups.push(() => timeoutHost.close());
  timeoutHost.registry.register({ ...workerSkill("spin", spinFile), timeoutMs: SPIN_TIMEOUT_MS });
  timeoutHost.registry.register(workerSkill("whoami", whoamiFile));
  // `before` runs right before the attempt's timer is armed: the deadline is then + timeoutMs.
  let armedAt = 0;
  timeoutHost.executor.use(
    defineInterceptor({
      name: "deadline-clock",
      match: { names: "spin" },
      before() {
        armedAt = performance.now();
      },
    }),
  );
  const whoami = async () => {
    const execution = await timeoutHost.executor.execute("whoami", {});
    if (execution.status !== "success") throw new Error(`whoami ended ${execution.status}`);
    return execution.output.threadId;
  };

  await whoami();
  const marker = join(directory, "spin-thread");
  const repetitions = [];
  for (let repetition = 0; repetition < TIMEOUT_REPETITIONS; repetition++) {
    const before = await whoami(); // the warm thread the loop will run on
    rmSync(marker, { force: true });
    const timedOut = await timeoutHost.executor.execute("spin", { marker });
    const resolvedAt = performance.now();
    const threadsAtTimeout = workerRuntime.threadCount();
    const after = await whoami();
    const recoveredAt = performance.now();
    const warmStart = performance.now();
    await whoami();
    const warmCall = performance.now() - warmStart;
    if (timedOut.status !== "timeout") throw new Error(`spin ended ${timedOut.status}, expected timeout`);
    repetitions.push({
      toTimeout: resolvedAt - (armedAt + SPIN_TIMEOUT_MS),
      toReplacement: recoveredAt - resolvedAt,
      warmCall,
      spinThread: Number(readFileSync(marker, "utf8")),
      before,
      after,
      threadsAtTimeout,
      threadsAfter: workerRuntime.threadCount(),
    });
  }
  // A loop that was not stopped would keep a core busy: measure the process's CPU while idle.
  const cpuStart = process.cpuUsage();
  await sleep(250);
  const cpu = process.cpuUsage(cpuStart);
  const idleCpuMs = (cpu.user + cpu.system) / 1000;
  const replaced = repetitions.every((r) => r.spinThread === r.before && r.after !== r.spinThread);

  // --- report -------------------------------------------------------------------------------
  const latencyRatio = skillboxLatency.median / rawLatency.median;
  const p99Ratio = skillboxLatency.p99 / rawLatency.p99;
  const throughputRatio = skillboxThroughput / rawThroughput;
  const floorLatencyRatio = skillboxLatency.median / floorLatency.median;
  const floorP99Ratio = skillboxLatency.p99 / floorLatency.p99;
  const floorThroughputRatio = skillboxThroughput / floorThroughput;
  const us = (ms) => `${Math.round(ms * 1000)} µs`;
  const ms = (value) => `${value.toFixed(1)} ms`;
  console.log(
    `worker runtime (no-op worker skill, audit trail on, ${THREADS} threads) vs raw tinypool (${THREADS} threads) plus the same audit rows`,
  );
  printTable([
    ["", "raw tinypool", "skillbox", "skillbox / raw", "raw + audit rows", "skillbox / that", "target", ""],
    [
      "latency c=1, median",
      us(rawLatency.median),
      us(skillboxLatency.median),
      `${latencyRatio.toFixed(2)}x (info)`,
      us(floorLatency.median),
      `${floorLatencyRatio.toFixed(2)}x`,
      `<= ${LATENCY_TARGET}x`,
      floorLatencyRatio <= LATENCY_TARGET ? "OK" : "MISSED",
    ],
    [
      "latency c=1, p99",
      us(rawLatency.p99),
      us(skillboxLatency.p99),
      `${p99Ratio.toFixed(2)}x (info)`,
      us(floorLatency.p99),
      `${floorP99Ratio.toFixed(2)}x`,
      "(info)",
      "",
    ],
    [
      `throughput c=${CONCURRENCY}`,
      formatRate(rawThroughput),
      formatRate(skillboxThroughput),
      `${throughputRatio.toFixed(2)}x (info)`,
      formatRate(floorThroughput),
      `${floorThroughputRatio.toFixed(2)}x`,
      `>= ${THROUGHPUT_TARGET}x`,
      floorThroughputRatio >= THROUGHPUT_TARGET ? "OK" : "MISSED",
    ],
  ]);
  console.log(
    `  (medians of ${ROUNDS} interleaved rounds: ${LATENCY_CALLS} sequential calls, ${THROUGHPUT_CALLS} calls at c=${CONCURRENCY}; ${executions} audited executions)`,
  );
  console.log(
    `timeout of a CPU loop (timeoutMs ${SPIN_TIMEOUT_MS}, 1 thread, median of ${TIMEOUT_REPETITIONS} repetitions)`,
  );
  printTable([
    [
      "deadline -> execute() resolves with status timeout",
      ms(median(repetitions.map((r) => r.toTimeout))),
      `(max ${ms(Math.max(...repetitions.map((r) => r.toTimeout)))})`,
    ],
    [
      "timeout -> next no-op succeeds on a fresh thread",
      ms(median(repetitions.map((r) => r.toReplacement))),
      `(max ${ms(Math.max(...repetitions.map((r) => r.toReplacement)))})`,
    ],
    [
      "  for comparison: the call after, on the warm thread",
      ms(median(repetitions.map((r) => r.warmCall))),
      "",
    ],
  ]);
  console.log(
    `  thread ids, loop -> next call: ${repetitions.map((r) => `${r.spinThread}->${r.after}`).join(", ")}; ` +
      `threads alive at the timeout ${[...new Set(repetitions.map((r) => r.threadsAtTimeout))].join("/")}, ` +
      `after the next call ${[...new Set(repetitions.map((r) => r.threadsAfter))].join("/")}`,
  );
  console.log(
    `  every loop stopped and replaced: ${replaced ? "yes" : "NO"}; process CPU over 250 ms idle afterwards: ${idleCpuMs.toFixed(1)} ms`,
  );
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
  rmSync(directory, { recursive: true, force: true });
  removeJitiCache(basename(directory));
}

/** A worker skill whose handler is the module at `path`. */
function workerSkill(name, path) {
  return {
    name,
    version: "1.0.0",
    schema: { input: { type: "object" } },
    runtime: "worker",
    handler: pathToFileURL(path).href,
    apiKeyId: "public",
  };
}

/** Runs `operation` `count` times one after another; returns the median and p99 per call (ms). */
async function latencies(count, operation) {
  const times = new Array(count);
  for (let index = 0; index < count; index++) {
    const start = performance.now();
    await operation();
    times[index] = performance.now() - start;
  }
  return { median: median(times), p99: percentile(times, 99) };
}

/** jiti's transform cache (`<tmpdir>/jiti`) names its files after the module's folder. */
function removeJitiCache(folder) {
  const cache = join(tmpdir(), "jiti");
  let entries = [];
  try {
    entries = readdirSync(cache);
  } catch {
    return;
  }
  for (const entry of entries) if (entry.startsWith(folder)) rmSync(join(cache, entry), { force: true });
}
