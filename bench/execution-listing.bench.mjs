// Memory of listing executions: `GET /api/executions?limit=260` (the HTTP app, in process, through
// `app.request`) over 260 executions whose input and output are ~1 MiB each, against the same
// listing over 260 tiny executions (the baseline, measured in the same run). Reports the peak RSS
// growth while listing (peak RSS after the listings minus RSS before, after a full gc), the
// response size and the median time. Each case runs in a fresh child process (with --expose-gc)
// over a database written beforehand by another child, so neither the writes nor the other case
// are in its peak. `BENCH_LISTING_FULL=1` adds, for reference, the same page as full records
// (`executor.listExecutions`), what the route built before listings carried previews.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import {
  formatMb,
  formatMs,
  printTable,
  silentLogger,
  temporaryDirectory,
  verdict,
} from "./lib/fixtures.mjs";
import { median } from "./lib/measure.mjs";

const ROWS = Number(process.env.BENCH_LISTING_ROWS ?? 260);
const BODY_BYTES = Number(process.env.BENCH_LISTING_BODY_BYTES ?? 1024 * 1024);
const LISTINGS = Number(process.env.BENCH_LISTING_REPEATS ?? 5);
/** Peak RSS growth of listing the big rows, beyond the baseline's, that still counts as bounded. */
const TARGET_GROWTH_BYTES = 32 * 1024 * 1024;
/** What every page must stay under (the listing's byte budget). */
const PAGE_BOUND_BYTES = 1024 * 1024;

const [, , role, mode, database] = process.argv;
if (role === "--seed") await seed(mode, database);
else if (role === "--list") await list(mode, database);
else await parent();

function runChild(args) {
  const result = spawnSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), ...args], {
    encoding: "utf8",
    timeout: 300_000,
    killSignal: "SIGKILL",
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(`${args.join(" ")} failed (${result.signal ?? result.status}): ${result.stderr}`);
  }
  return JSON.parse(result.stdout.trim().split("\n").pop());
}

async function parent() {
  const temporary = temporaryDirectory("skillbox-bench-execution-listing");
  try {
    const tinyDatabase = join(temporary.path, "tiny.db");
    const bigDatabase = join(temporary.path, "big.db");
    runChild(["--seed", "tiny", tinyDatabase]);
    runChild(["--seed", "big", bigDatabase]);
    const baseline = runChild(["--list", "previews", tinyDatabase]);
    const previews = runChild(["--list", "previews", bigDatabase]);
    const full =
      process.env.BENCH_LISTING_FULL === "1" ? runChild(["--list", "full", bigDatabase]) : undefined;

    const stored = ROWS * 2 * BODY_BYTES;
    console.log(
      `memory of listing ${ROWS} executions (limit=${ROWS}), bodies of ~${formatMb(BODY_BYTES)} in and out (${formatMb(stored)} stored) vs ${ROWS} tiny ones`,
    );
    printTable([
      ["case", "peak RSS growth", "response", "entries", "median"],
      [
        "tiny rows, GET /api/executions (baseline)",
        formatMb(baseline.growth),
        formatMb(baseline.bytes),
        baseline.entries,
        formatMs(baseline.medianMs),
      ],
      [
        "big rows, GET /api/executions (previews)",
        formatMb(previews.growth),
        formatMb(previews.bytes),
        previews.entries,
        formatMs(previews.medianMs),
      ],
      ...(full === undefined
        ? []
        : [
            [
              "big rows, executor.listExecutions (full records)",
              formatMb(full.growth),
              formatMb(full.bytes),
              full.entries,
              formatMs(full.medianMs),
            ],
          ]),
    ]);
    const beyond = previews.growth - baseline.growth;
    console.log(
      `  peak RSS growth beyond baseline = ${formatMb(beyond)} (target <= ${formatMb(TARGET_GROWTH_BYTES)}) ${verdict(beyond <= TARGET_GROWTH_BYTES)}`,
    );
    console.log(
      `  response = ${formatMb(previews.bytes)} for ${previews.entries} entries (bound < ${formatMb(PAGE_BOUND_BYTES)}) ${verdict(previews.bytes < PAGE_BOUND_BYTES && previews.entries === ROWS)}`,
    );
    console.log(
      `  time vs baseline = ${(previews.medianMs / baseline.medianMs).toFixed(1)}x (the bodies are still read by SQLite to cut them; none reaches JavaScript)`,
    );
    if (full === undefined) console.log("  (BENCH_LISTING_FULL=1 adds the full-record page for reference)");
  } finally {
    temporary.cleanup();
  }
}

async function seed(mode, database) {
  const { createSkillHost } = await import("@skillbox/core");
  const host = createSkillHost({ database, logger: silentLogger() });
  host.registry.register({ name: "echo", version: "1.0.0", handler: "echo" });
  host.executor.registerHandler("echo", (input) => ({ echoed: input.msg }));
  const body = mode === "big" ? "x".repeat(BODY_BYTES) : "x";
  for (let index = 0; index < ROWS; index++) {
    const execution = await host.executor.execute("echo", { msg: `${index}:${body}` });
    if (execution.status !== "success") throw new Error(`seeding failed: ${JSON.stringify(execution.error)}`);
  }
  await host.close();
  console.log(JSON.stringify({ rows: ROWS }));
}

async function list(mode, database) {
  const { createSkillHost } = await import("@skillbox/core");
  const { createHttpApp } = await import("@skillbox/server");
  const host = createSkillHost({ database, logger: silentLogger(), recoverInterrupted: false });
  const app = createHttpApp({ registry: host.registry, executor: host.executor, a2a: false });
  const once = async () => {
    if (mode === "full") {
      // The page as one JSON string is over V8's string limit here (the 500 of old), so its size
      // is summed per record.
      const executions = await host.executor.listExecutions({ limit: ROWS });
      const bytes = executions.reduce(
        (sum, execution) => sum + Buffer.byteLength(JSON.stringify(execution)),
        0,
      );
      return { bytes, entries: executions.length };
    }
    const response = await app.request(`http://localhost/api/executions?limit=${ROWS}`);
    const text = await response.text();
    if (response.status !== 200) throw new Error(`GET /api/executions answered ${response.status}: ${text}`);
    return { bytes: Buffer.byteLength(text), entries: JSON.parse(text).executions.length };
  };
  // Warm up on one small page (module code, prepared statements), then settle.
  await app.request("http://localhost/api/executions?limit=1");
  for (let pass = 0; pass < 4; pass++) {
    globalThis.gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const before = process.memoryUsage().rss;
  const durations = [];
  let last;
  for (let index = 0; index < LISTINGS; index++) {
    const started = performance.now();
    last = await once();
    durations.push(performance.now() - started);
  }
  const peak = process.resourceUsage().maxRSS * 1024;
  await host.close();
  console.log(JSON.stringify({ growth: Math.max(0, peak - before), ...last, medianMs: median(durations) }));
}
