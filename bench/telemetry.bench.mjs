// Executor throughput with OpenTelemetry: a no-op inline skill with 3 no-op interceptors and the
// audit trail on, sequential and at concurrency 64, for three hosts measured in interleaved
// rounds of one run:
//   - tracing absent: `telemetry: false` (no spans, no metrics: the baseline);
//   - API only: the default host with no SDK installed (what embedding Skillbox costs an
//     application that does not trace; target >= 0.97x of absent);
//   - SDK: the OpenTelemetry SDK registered (AsyncLocalStorage context, W3C propagator, a
//     BatchSpanProcessor into an InMemorySpanExporter that lets go of what it exported, a
//     MeterProvider with a periodic reader into an in-memory exporter), for information.
// The SDK registers process-wide globals, and a tracer that met the SDK once may keep it: its
// rounds run in a child process of their own (this file again, `sdk` mode), which measures its
// own absent host as the baseline of its ratio. This process never loads the SDK, and checks it.
//
// Each round measures the two hosts of a process in pairs of short runs back to back, taking
// turns at going first; a ratio is the median of the pairs' ratios. On a shared machine a slow
// stretch (another process, a WAL checkpoint) then spoils a pair or two, not a whole host's run.
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { metrics, trace } from "@opentelemetry/api";
import { createSkillHost } from "@skillbox/core";
import { printTable, registerNoopSkill, silentLogger, verdict } from "./lib/fixtures.mjs";
import { concurrentRate, formatRate, median, sequentialRate } from "./lib/measure.mjs";

/** Executions per measured run. */
const SEQUENTIAL_COUNT = Number(process.env.BENCH_SEQUENTIAL ?? 250);
const CONCURRENT_COUNT = Number(process.env.BENCH_CONCURRENT ?? 1_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Pairs of runs per round and mode. */
const PAIRS = Number(process.env.BENCH_PAIRS ?? 10);
const WARM_UP_COUNT = 2_000;
const CONCURRENCY = 64;
const API_ONLY_TARGET = 0.97;

const MODES = [
  ["sequential", (execute) => sequentialRate(SEQUENTIAL_COUNT, execute)],
  ["concurrent", (execute) => concurrentRate(CONCURRENT_COUNT, CONCURRENCY, execute)],
];

/** A host with the benches' no-op skill and 3 no-op interceptors; `telemetry` as the host option. */
function benchHost(directory, name, telemetry) {
  const host = createSkillHost({
    database: join(directory, `${name}.db`),
    logger: silentLogger(),
    ...(telemetry === undefined ? {} : { telemetry }),
  });
  registerNoopSkill(host, { interceptors: 3 });
  const input = { value: 1 };
  return { host, execute: () => host.executor.execute("noop", input) };
}

/** JIT, Ajv and caches warm, sequential and concurrent: the first round is not a cold one. */
async function warmUp(hosts) {
  for (const { execute } of Object.values(hosts)) {
    await sequentialRate(WARM_UP_COUNT, execute);
    await concurrentRate(WARM_UP_COUNT * 2, CONCURRENCY, execute);
  }
}

/**
 * One round over the two hosts of this process: per mode, `PAIRS` pairs of runs, the hosts
 * taking turns at going first. Returns the rates by `<host>.<mode>`, a pair at the same index.
 */
async function measureRound(round, hosts) {
  const [first, second] = Object.keys(hosts);
  const rates = {};
  for (const [mode, measure] of MODES) {
    for (let pair = 0; pair < PAIRS; pair++) {
      const order = (round * PAIRS + pair) % 2 === 0 ? [first, second] : [second, first];
      for (const name of order) {
        const key = `${name}.${mode}`;
        rates[key] = [...(rates[key] ?? []), await measure(hosts[name].execute)];
      }
    }
  }
  return rates;
}

/** The child process: installs the SDK, then measures a round each time the parent asks. */
async function runSdkChild() {
  const { context, propagation } = await import("@opentelemetry/api");
  const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks");
  const { W3CTraceContextPropagator } = await import("@opentelemetry/core");
  const { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } =
    await import("@opentelemetry/sdk-metrics");
  const { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } = await import(
    "@opentelemetry/sdk-trace-base"
  );
  const core = await import("@skillbox/core");

  /**
   * An in-memory exporter that lets go of each batch once exported, as a network exporter does:
   * one that kept every span would measure the garbage collector walking them.
   */
  class ReleasingSpanExporter extends InMemorySpanExporter {
    exported = 0;
    export(spans, resultCallback) {
      super.export(spans, (result) => {
        this.exported += spans.length;
        this.reset();
        resultCallback(result);
      });
    }
  }
  const spanExporter = new ReleasingSpanExporter();
  // `skillbox serve` uses core's id generator (relayed spans keep their ids); an older core has none.
  const idGenerator = core.createSkillboxIdGenerator?.();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(spanExporter)],
    ...(idGenerator === undefined ? {} : { idGenerator }),
  });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const meterProvider = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 1_000 })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);

  const directory = mkdtempSync(join(tmpdir(), "skillbox-telemetry-bench-sdk-"));
  const hosts = { absent: benchHost(directory, "absent", false), sdk: benchHost(directory, "sdk") };
  /** Spans exported by `count` executions of `execute`, once every span of them has ended. */
  const spansOf = async (count, execute) => {
    await tracerProvider.forceFlush();
    spanExporter.exported = 0;
    for (let index = 0; index < count; index++) await execute();
    // A span may end a moment after its execution's promise settled.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await tracerProvider.forceFlush();
    return spanExporter.exported;
  };
  /** Executions of the SDK host in the rounds. */
  let executions = 0;
  try {
    await warmUp(hosts);
    const probe = {
      absentSpans: await spansOf(100, hosts.absent.execute),
      spansPerExecution: (await spansOf(100, hosts.sdk.execute)) / 100,
    };
    spanExporter.exported = 0;
    process.on("message", async (message) => {
      if (message.type === "round") {
        const rates = await measureRound(message.round, hosts);
        executions += PAIRS * (SEQUENTIAL_COUNT + CONCURRENT_COUNT);
        process.send({ type: "rates", rates });
      } else if (message.type === "done") {
        await tracerProvider.forceFlush();
        const exported = { spans: spanExporter.exported, executions };
        for (const { host } of Object.values(hosts)) await host.close();
        await tracerProvider.shutdown();
        await meterProvider.shutdown();
        rmSync(directory, { recursive: true, force: true });
        process.send({ type: "spans", probe, exported }, () => process.exit(0));
      }
    });
    process.send({ type: "ready" });
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
}

/** Throws unless this process has no SDK: no recording tracer, the no-op meter provider. */
function assertNoSdk() {
  const probe = trace.getTracer("skillbox-bench").startSpan("probe");
  const recording = probe.isRecording();
  probe.end();
  const meterProvider = metrics.getMeterProvider().constructor.name;
  if (recording || meterProvider !== "NoopMeterProvider") {
    throw new Error(
      `the API-only rounds found an SDK (recording: ${recording}, meter provider: ${meterProvider})`,
    );
  }
}

/** Starts the SDK child; `round(n)` has it measure round `n`, `finish()` ends it. */
async function startSdkChild() {
  const child = fork(fileURLToPath(import.meta.url), ["sdk"], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const next = (type) =>
    new Promise((resolve, reject) => {
      const onMessage = (message) => {
        if (message.type !== type) return;
        child.off("message", onMessage);
        child.off("exit", onExit);
        resolve(message);
      };
      const onExit = (code) => reject(new Error(`the SDK child exited with ${code} before "${type}"`));
      child.on("message", onMessage);
      child.once("exit", onExit);
    });
  await next("ready");
  return {
    async round(round) {
      const answer = next("rates");
      child.send({ type: "round", round });
      return (await answer).rates;
    },
    async finish() {
      const answer = next("spans");
      child.send({ type: "done" });
      const result = await answer;
      await exited;
      return result;
    },
    kill: () => child.kill(),
  };
}

async function runParent() {
  assertNoSdk();
  const directory = mkdtempSync(join(tmpdir(), "skillbox-telemetry-bench-"));
  const hosts = { absent: benchHost(directory, "absent", false), apiOnly: benchHost(directory, "api-only") };
  let child;
  try {
    child = await startSdkChild();
    await warmUp(hosts);
    const samples = {};
    const add = (rates, prefix) => {
      for (const [name, values] of Object.entries(rates)) {
        const key = `${prefix}${name}`;
        samples[key] = [...(samples[key] ?? []), ...values];
      }
    };
    // The child measures while this process waits, and the other way round: no two measurements
    // share the CPU.
    for (let round = 0; round < ROUNDS; round++) {
      add(await measureRound(round, hosts), "");
      add(await child.round(round), "child.");
    }
    const { probe, exported } = await child.finish();
    child = undefined;
    assertNoSdk();

    const rate = (name) => formatRate(median(samples[name]));
    const ratio = (name, baseline) =>
      median(samples[name].map((value, pair) => value / samples[baseline][pair]));
    const apiSequential = ratio("apiOnly.sequential", "absent.sequential");
    const apiConcurrent = ratio("apiOnly.concurrent", "absent.concurrent");
    const sdkSequential = ratio("child.sdk.sequential", "child.absent.sequential");
    const sdkConcurrent = ratio("child.sdk.concurrent", "child.absent.concurrent");

    console.log(
      "executor throughput with OpenTelemetry (no-op inline skill, 3 no-op interceptors, audit trail on)",
    );
    printTable([
      ["", "sequential", `concurrency ${CONCURRENCY}`],
      ["tracing absent (telemetry: false)", rate("absent.sequential"), rate("absent.concurrent")],
      ["API only (no SDK)", rate("apiOnly.sequential"), rate("apiOnly.concurrent")],
      ["SDK process: tracing absent", rate("child.absent.sequential"), rate("child.absent.concurrent")],
      ["SDK process: SDK, batch to memory", rate("child.sdk.sequential"), rate("child.sdk.concurrent")],
    ]);
    console.log(
      `  API only / absent, sequential = ${apiSequential.toFixed(3)}x (target >= ${API_ONLY_TARGET}x) ${verdict(apiSequential >= API_ONLY_TARGET)}`,
    );
    console.log(
      `  API only / absent, concurrency ${CONCURRENCY} = ${apiConcurrent.toFixed(3)}x (target >= ${API_ONLY_TARGET}x) ${verdict(apiConcurrent >= API_ONLY_TARGET)}`,
    );
    console.log(
      `  SDK / absent, sequential = ${sdkSequential.toFixed(2)}x, concurrency ${CONCURRENCY} = ${sdkConcurrent.toFixed(2)}x (for information)`,
    );
    console.log(
      `  spans per execution with the SDK: ${probe.spansPerExecution.toFixed(1)} (${exported.spans.toLocaleString("en-US")} exported in the rounds, for ${exported.executions.toLocaleString("en-US")} executions)`,
    );
    if (probe.absentSpans > 0) {
      console.log(`  note: the \`telemetry: false\` host made ${probe.absentSpans} spans in 100 executions`);
    }
    if (probe.spansPerExecution === 0) console.log("  note: the SDK recorded no spans: this core makes none");
    console.log(
      `  (rates: medians of ${ROUNDS} interleaved rounds of ${PAIRS} pairs of runs of ${SEQUENTIAL_COUNT} sequential / ${CONCURRENT_COUNT.toLocaleString("en-US")} concurrent executions; ratios: medians of the pairs' ratios; the SDK rounds in a child process, between these)`,
    );
  } finally {
    child?.kill();
    for (const { host } of Object.values(hosts)) await host.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

if (process.argv[2] === "sdk") await runSdkChild();
else await runParent();
