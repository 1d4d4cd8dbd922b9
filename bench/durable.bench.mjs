// Durable executions (issue 16), three measurements:
// 1. `submit()` + `wait()` at concurrency 64 against `execute()` at concurrency 64 on the same host
//    (no-op inline skill, 3 no-op interceptors, audit trail on, as executor-overhead measures it;
//    the background queue may run 64 at a time), interleaved rounds: target >= 0.7x.
// 2. SSE: time from `ctx.progress()` in a handler to the event reaching an HTTP client of
//    `GET /api/executions/:id/events` on a real server (node:http, loopback), p50 and p99; beside
//    it, for the same reports, the time to an in-process `executor.events(id)` subscriber (the
//    core's share of that time).
// 3. 10,000 submitted executions drain with bounded memory: each case in a fresh child process
//    (--expose-gc), RSS sampled every 50 ms from the baseline (after warm-up and a full gc, before
//    the first call) until nothing is queued or running; peak RSS, its growth over the baseline,
//    the growth left after a full gc once all ended, and the rate, against the same 10,000 run
//    through execute() at concurrency 64 (the same rows without the queue: SQLite's and the
//    allocator's share of the growth), plus 1,000 submitted for scale. Target: the JS heap left
//    after the drain and a full gc grows by at most 4 MB (nothing per queued execution stays in
//    memory); the RSS figures are reported — their growth is mostly SQLite's page cache, which
//    better-sqlite3 sizes at 16 MiB per connection, and levels off as the file outgrows it.
import { spawnSync } from "node:child_process";
import { request as httpRequest } from "node:http";
import { cpus } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import {
  formatMb,
  formatMs,
  printTable,
  registerNoopSkill,
  silentLogger,
  temporaryDirectory,
  verdict,
} from "./lib/fixtures.mjs";
import { compareRates, concurrentRate, formatRate, percentile, startRssSampler } from "./lib/measure.mjs";

const CONCURRENT_COUNT = Number(process.env.BENCH_DURABLE_COUNT ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SSE_EXECUTIONS = Number(process.env.BENCH_SSE_EXECUTIONS ?? 20);
const SSE_REPORTS = Number(process.env.BENCH_SSE_REPORTS ?? 50);
const DRAIN_COUNT = Number(process.env.BENCH_DRAIN_COUNT ?? 10_000);
const DRAIN_REFERENCE_COUNT = Math.max(1, Math.round(DRAIN_COUNT / 10));
const SUBMIT_WAIT_TARGET = 0.7;
/** What draining a backlog may cost in peak RSS beyond writing the same executions with execute(). */
const DRAIN_HEAP_TARGET_BYTES = 4 * 1024 * 1024;
const API_KEY = "bench-key";
const OWNER = "bench";
const MARK = "sse-bench:";

const [, , role, howArgument, countArgument, databaseArgument] = process.argv;
if (role === "--memory") await memoryChild(howArgument, Number(countArgument), databaseArgument);
else await main();

async function main() {
  const temporary = temporaryDirectory("skillbox-bench-durable");
  try {
    await submitAgainstExecute(join(temporary.path, "throughput.db"));
    await progressOverSse(join(temporary.path, "sse.db"));
    drainWithBoundedMemory(temporary.path);
    console.log(`  (${cpus().length} CPUs, Node ${process.version})`);
  } finally {
    temporary.cleanup();
  }
}

async function submitAgainstExecute(database) {
  const { createSkillHost } = await import("@skillbox/core");
  const host = createSkillHost({ database, logger: silentLogger(), queue: { concurrency: 64 } });
  try {
    registerNoopSkill(host, { interceptors: 3 });
    const input = { value: 1 };
    const execute = async () => {
      const execution = await host.executor.execute("noop", input);
      if (execution.status !== "success") throw new Error(`execute() ended ${execution.status}`);
    };
    const submitAndWait = async () => {
      const id = await host.executor.submit("noop", input);
      const execution = await host.executor.wait(id);
      if (execution.status !== "success") throw new Error(`submit() + wait() ended ${execution.status}`);
    };

    // Warm up JIT, Ajv, prepared statements and the queue.
    await concurrentRate(2_000, 64, execute);
    await concurrentRate(2_000, 64, submitAndWait);
    const rates = await compareRates(
      {
        execute64: () => concurrentRate(CONCURRENT_COUNT, 64, execute),
        submitWait64: () => concurrentRate(CONCURRENT_COUNT, 64, submitAndWait),
      },
      ROUNDS,
    );
    const recorded = await host.executor.countExecutions({ status: "success" });
    const expected = 4_000 + 2 * ROUNDS * CONCURRENT_COUNT;
    if (recorded !== expected)
      throw new Error(`expected ${expected} successful executions, found ${recorded}`);

    const ratio = rates.submitWait64 / rates.execute64;
    console.log(
      "submit() + wait() vs execute() (no-op inline skill, 3 no-op interceptors, audit trail on, queue concurrency 64)",
    );
    printTable([
      ["", "execute()", "submit() + wait()", "ratio", "target", ""],
      [
        "executions/s, 64 in flight",
        formatRate(rates.execute64),
        formatRate(rates.submitWait64),
        `${ratio.toFixed(2)}x`,
        `>= ${SUBMIT_WAIT_TARGET}x`,
        verdict(ratio >= SUBMIT_WAIT_TARGET),
      ],
    ]);
    console.log(
      `  (medians of ${ROUNDS} interleaved rounds of ${CONCURRENT_COUNT} executions each; ${recorded} audited executions)`,
    );
  } finally {
    await host.close();
  }
}

async function progressOverSse(database) {
  const { createSkillHost } = await import("@skillbox/core");
  const { createHttpApp, startHttpServer } = await import("@skillbox/server");
  const host = createSkillHost({ database, logger: silentLogger() });
  const cleanups = [() => host.close()];
  try {
    // The handler waits until both subscribers are listening, then reports with the time of each
    // report in its message, a little apart, as a long-running handler would.
    const gates = new Map();
    const gateOf = (id) => {
      if (!gates.has(id)) gates.set(id, deferred());
      return gates.get(id);
    };
    host.registry.register({
      name: "reporter",
      version: "1.0.0",
      schema: { input: { type: "object" } },
      handler: "reporter",
      apiKeyId: "public",
      timeoutMs: 60_000,
    });
    host.executor.registerHandler("reporter", async (_input, ctx) => {
      await gateOf(ctx.executionId).promise;
      for (let index = 1; index <= SSE_REPORTS; index++) {
        ctx.progress({ progress: index, total: SSE_REPORTS, message: `${MARK}${performance.now()}` });
        await delay(2);
      }
      return { reports: SSE_REPORTS };
    });
    const app = createHttpApp({
      registry: host.registry,
      executor: host.executor,
      apiKeys: { [API_KEY]: OWNER },
      a2a: false,
    });
    const server = await startHttpServer({ fetch: app.fetch, port: 0, apiKeysConfigured: true });
    cleanups.push(() => server.close());

    const overHttp = [];
    const inProcess = [];
    let missing = 0;
    const runOne = async () => {
      const id = await host.executor.submit("reporter", {}, { apiKeyId: OWNER });
      const events = followInProcess(host, id, inProcess);
      const stream = await followOverSse(server.url, id, overHttp);
      // Subscribed once the route answered with its headers; the in-process one at once.
      await delay(20);
      gateOf(id).resolve();
      const [httpCount, inProcessCount] = await Promise.all([stream.done, events]);
      missing += 2 * SSE_REPORTS - httpCount - inProcessCount;
      const execution = await host.executor.wait(id);
      if (execution.status !== "success") throw new Error(`the reporter ended ${execution.status}`);
    };
    await runOne(); // warm-up
    overHttp.length = 0;
    inProcess.length = 0;
    missing = 0;
    for (let index = 0; index < SSE_EXECUTIONS; index++) await runOne();

    console.log(
      "SSE: ctx.progress() -> the event at an HTTP client of GET /api/executions/:id/events (real server, loopback)",
    );
    printTable([
      ["", "p50", "p99", "max", "reports", "target"],
      [
        "in-process executor.events(id)",
        formatMs(percentile(inProcess, 50)),
        formatMs(percentile(inProcess, 99)),
        formatMs(Math.max(...inProcess)),
        inProcess.length,
        "(baseline)",
      ],
      [
        "HTTP client, Server-Sent Events",
        formatMs(percentile(overHttp, 50)),
        formatMs(percentile(overHttp, 99)),
        formatMs(Math.max(...overHttp)),
        overHttp.length,
        "(info, no target)",
      ],
    ]);
    console.log(
      `  (${SSE_EXECUTIONS} executions one after another, ${SSE_REPORTS} reports each, 2 ms apart; ` +
        `${missing} reports not seen by a subscriber)`,
    );
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

/** Records how long each progress report of `id` took to reach `executor.events(id)`; resolves with the count. */
async function followInProcess(host, id, latencies) {
  let count = 0;
  for await (const event of host.executor.events(id)) {
    if (event.type !== "progress") continue;
    const sentAt = timeIn(event.progress.message);
    if (sentAt === undefined) continue;
    latencies.push(performance.now() - sentAt);
    count++;
  }
  return count;
}

/**
 * Opens `GET /api/executions/:id/events` and records, for each event whose data carries a report's
 * time, how long it took to arrive. Resolves once the response headers are in; `done` resolves with
 * the count when the server ends the stream.
 */
function followOverSse(baseUrl, id, latencies) {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolveHeaders, reject) => {
    const request = httpRequest(
      {
        hostname,
        port,
        path: `/api/executions/${id}/events`,
        headers: { accept: "text/event-stream", authorization: `Bearer ${API_KEY}` },
      },
      (response) => {
        if (response.statusCode !== 200) {
          let text = "";
          response.setEncoding("utf8");
          response.on("data", (chunk) => {
            text += chunk;
          });
          response.on("end", () =>
            reject(new Error(`GET /api/executions/${id}/events answered ${response.statusCode}: ${text}`)),
          );
          return;
        }
        let count = 0;
        let buffer = "";
        const done = new Promise((resolveDone, rejectDone) => {
          response.setEncoding("utf8");
          response.on("data", (chunk) => {
            const arrivedAt = performance.now();
            buffer += chunk;
            // An event ends at a blank line; only whole events are read.
            const events = buffer.split(/\r?\n\r?\n/);
            buffer = events.pop();
            for (const event of events) {
              // Status events carry the record, whose `progress` repeats the latest report.
              if (!/^event: ?progress$/m.test(event)) continue;
              const sentAt = timeIn(event);
              if (sentAt === undefined) continue;
              latencies.push(arrivedAt - sentAt);
              count++;
            }
          });
          response.on("end", () => resolveDone(count));
          response.on("error", rejectDone);
        });
        resolveHeaders({ done });
      },
    );
    request.on("error", reject);
    request.end();
  });
}

/** The `performance.now()` a report put in its message, found in any text that carries it. */
function timeIn(text) {
  if (typeof text !== "string") return undefined;
  const at = text.indexOf(MARK);
  if (at === -1) return undefined;
  const time = Number.parseFloat(text.slice(at + MARK.length));
  return Number.isFinite(time) ? time : undefined;
}

function drainWithBoundedMemory(folder) {
  const baseline = runMemoryChild("execute", DRAIN_COUNT, join(folder, "execute.db"));
  const reference = runMemoryChild("submit", DRAIN_REFERENCE_COUNT, join(folder, "drain-reference.db"));
  const drained = runMemoryChild("submit", DRAIN_COUNT, join(folder, "drain.db"));
  const beyond = drained.growth - baseline.growth;
  console.log(
    `${DRAIN_COUNT.toLocaleString("en-US")} submitted executions drain (no-op inline skill, audit trail on, default queue) ` +
      `vs the same number through execute() at concurrency 64 (baseline)`,
  );
  const row = (label, result) => [
    label,
    formatMb(result.baseline),
    formatMb(result.peak),
    formatMb(result.growth),
    formatMb(result.retained),
    formatMb(result.heapRetained),
    formatMs(result.submitMs),
    formatMs(result.finishMs),
    formatRate(result.count / (result.finishMs / 1000)),
  ];
  printTable([
    [
      "",
      "baseline RSS",
      "peak RSS",
      "growth",
      "after gc",
      "heap after gc",
      "all submitted",
      "all final",
      "rate",
    ],
    row(`${DRAIN_COUNT.toLocaleString("en-US")} execute() (baseline)`, baseline),
    row(`${DRAIN_REFERENCE_COUNT.toLocaleString("en-US")} submitted`, reference),
    row(`${DRAIN_COUNT.toLocaleString("en-US")} submitted`, drained),
  ]);
  console.log(
    `  JS heap left after the drain of ${DRAIN_COUNT.toLocaleString("en-US")} and a full gc = ${formatMb(drained.heapRetained)} (target <= ${formatMb(DRAIN_HEAP_TARGET_BYTES)}) ${verdict(drained.heapRetained <= DRAIN_HEAP_TARGET_BYTES)}; ` +
      `peak RSS ${formatMb(drained.peak)}, ${formatMb(beyond)} more growth than execute()'s (info: SQLite's page cache, 16 MiB per connection)`,
  );
  console.log(
    `  (each case a fresh process; RSS sampled every 50 ms; "after gc": RSS and JS heap growth left once all ended and were collected; ` +
      `times from the first call, 64 calls in flight; ${drained.samples} samples)`,
  );
}

function runMemoryChild(how, count, database) {
  const result = spawnSync(
    process.execPath,
    ["--expose-gc", fileURLToPath(import.meta.url), "--memory", how, String(count), database],
    { encoding: "utf8", timeout: 600_000, killSignal: "SIGKILL", maxBuffer: 16 * 1024 * 1024 },
  );
  if (result.status !== 0) {
    throw new Error(`${how} of ${count} failed (${result.signal ?? result.status}): ${result.stderr}`);
  }
  return JSON.parse(result.stdout.trim().split("\n").pop());
}

/**
 * Child: `count` executions 64 calls at a time, either submitted (then the queue drains them) or
 * through execute() (the baseline: the same rows written without the queue), with RSS sampled from
 * before the first call until none is left unfinished.
 */
async function memoryChild(how, count, database) {
  const { createSkillHost, EXECUTION_STATUSES, isFinalExecutionStatus } = await import("@skillbox/core");
  const host = createSkillHost({ database, logger: silentLogger() });
  registerNoopSkill(host);
  const unfinishedStatuses = EXECUTION_STATUSES.filter((status) => !isFinalExecutionStatus(status));
  const unfinished = () => host.executor.countExecutions({ status: unfinishedStatuses });
  const call =
    how === "submit"
      ? (index) => host.executor.submit("noop", { index })
      : (index) => host.executor.execute("noop", { index });
  const collectGarbage = async () => {
    for (let pass = 0; pass < 4; pass++) {
      globalThis.gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  // Warm-up of both paths (module code, Ajv, statements, the queue), then settle before the baseline.
  const warmUp = 200;
  await concurrentRate(warmUp / 2, 16, async () =>
    host.executor.wait(await host.executor.submit("noop", {})),
  );
  await concurrentRate(warmUp / 2, 16, () => host.executor.execute("noop", {}));
  await collectGarbage();
  const baseline = process.memoryUsage.rss();
  const baselineHeap = process.memoryUsage().heapUsed;

  const finished = deferred();
  let called = false;
  let finishedAt;
  // One count at a time: the audit-trail read is asynchronous, the sampler's tick is not.
  let counting = false;
  const sampler = startRssSampler({
    intervalMs: 50,
    onSample: () => {
      if (!called || finishedAt !== undefined || counting) return;
      counting = true;
      unfinished().then(
        (count) => {
          counting = false;
          if (count === 0 && finishedAt === undefined) {
            finishedAt = performance.now();
            finished.resolve();
          }
        },
        (error) => finished.reject(error),
      );
    },
  });
  const started = performance.now();
  await concurrentRate(count, 64, call);
  const submitMs = performance.now() - started;
  called = true;
  await finished.promise;
  const { peak, samples } = sampler.stop();
  const succeeded = (await host.executor.countExecutions({ status: "success" })) - warmUp;
  // What stays once the garbage is collected: a drained backlog must leave nothing behind.
  await collectGarbage();
  const retained = process.memoryUsage.rss() - baseline;
  const heapRetained = process.memoryUsage().heapUsed - baselineHeap;
  await host.close();
  if (succeeded !== count) throw new Error(`expected ${count} successful executions, found ${succeeded}`);
  console.log(
    JSON.stringify({
      count,
      baseline,
      peak,
      growth: Math.max(0, peak - baseline),
      retained,
      heapRetained,
      submitMs,
      finishMs: finishedAt - started,
      samples,
    }),
  );
}

/** A promise with its resolve function (Promise.withResolvers is Node 22). */
function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((settle, fail) => {
    resolve = settle;
    reject = fail;
  });
  return { promise, resolve, reject };
}
