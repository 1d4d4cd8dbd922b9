// HTTP API overhead: executions per second of `POST /api/skills/echo/execute` (an inline echo
// skill with JSON Schemas, the audit trail on, API-key authentication, a zod-validated body)
// against a bare Hono route in the same app and the same server that parses the same body and
// answers the same JSON (an execution record of the same shape) — one server, one load
// generator, interleaved rounds. The load generator runs in a worker thread (node:http with a
// keep-alive agent, a fixed number of requests in flight), so its own work does not share the
// server's event loop.
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";

const REQUESTS = Number(process.env.BENCH_HTTP_REQUESTS ?? 5_000);
const SEQUENTIAL_REQUESTS = Number(process.env.BENCH_HTTP_SEQUENTIAL ?? 1_000);
const CONCURRENCY = Number(process.env.BENCH_HTTP_CONCURRENCY ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const TARGET = 0.5;
const API_KEY = "bench-key";

if (isMainThread) await main();
else runLoadGenerator();

async function main() {
  const { createSkillHost } = await import("@skillbox/core");
  const { createHttpApp, startHttpServer } = await import("@skillbox/server");
  const { Hono } = await import("hono");
  const { printTable, silentLogger, verdict } = await import("./lib/fixtures.mjs");
  const { compareRates, formatRate } = await import("./lib/measure.mjs");

  const directory = mkdtempSync(join(tmpdir(), "skillbox-http-bench-"));
  const cleanups = [];
  try {
    const host = createSkillHost({ database: join(directory, "skillbox.db"), logger: silentLogger() });
    cleanups.push(() => host.close());
    host.registry.register({
      name: "echo",
      version: "1.0.0",
      description: "Returns the message",
      schema: {
        input: { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] },
        output: { type: "object", properties: { echoed: { type: "string" } } },
      },
      handler: "echo",
      apiKeyId: "public",
    });
    host.executor.registerHandler("echo", (input) => ({ echoed: input.msg }));

    // A real record, so the bare route answers JSON of the same shape and size.
    const template = await host.executor.execute("echo", { msg: "hello" }, { apiKeyId: "bench" });
    const app = new Hono();
    // Registered first and answering without next(), so no middleware of the API runs for them.
    app.post("/bare/echo", async (context) => {
      const body = await context.req.json();
      return context.json({ ...template, input: body.input, output: { echoed: body.input.msg } });
    });
    // For reference: a bare route that calls the executor itself (no authentication, no body
    // validation, no cancellation): the cost of an audited execution, which any route pays.
    app.post("/bare/execute", async (context) => {
      const body = await context.req.json();
      return context.json(await host.executor.execute("echo", body.input, { apiKeyId: "bench" }));
    });
    app.route(
      "/",
      createHttpApp({ registry: host.registry, executor: host.executor, apiKeys: { [API_KEY]: "bench" } }),
    );
    const server = await startHttpServer({ fetch: app.fetch, port: 0, apiKeysConfigured: true });
    cleanups.push(() => server.close());

    const loadGenerator = startLoadGenerator(server.url);
    cleanups.push(() => loadGenerator.close());
    const skillboxPath = "/api/skills/echo/execute";
    const barePath = "/bare/echo";
    const bareExecutePath = "/bare/execute";

    // Both routes must answer 200 with the same fields before anything is measured.
    const [skillboxSample, bareSample, bareExecuteSample] = await Promise.all([
      loadGenerator.sample(skillboxPath),
      loadGenerator.sample(barePath),
      loadGenerator.sample(bareExecutePath),
    ]);
    if (skillboxSample.status !== "success") throw new Error(`echo ended ${skillboxSample.status}`);
    for (const sample of [bareSample, bareExecuteSample]) {
      if (Object.keys(skillboxSample).join() !== Object.keys(sample).join()) {
        throw new Error("a bare route does not answer the same JSON as the execute route");
      }
    }

    // Warm-up: JIT, Ajv compilation, keep-alive sockets, SQLite pages.
    for (let index = 0; index < 2; index++) {
      for (const path of [skillboxPath, barePath, bareExecutePath]) {
        await loadGenerator.run(path, REQUESTS, CONCURRENCY);
      }
    }
    const before = await host.executor.countExecutions({ skill: "echo", status: "success" });
    const rates = await compareRates(
      {
        bareConcurrent: () => loadGenerator.run(barePath, REQUESTS, CONCURRENCY),
        skillboxConcurrent: () => loadGenerator.run(skillboxPath, REQUESTS, CONCURRENCY),
        bareExecuteConcurrent: () => loadGenerator.run(bareExecutePath, REQUESTS, CONCURRENCY),
        bareSequential: () => loadGenerator.run(barePath, SEQUENTIAL_REQUESTS, 1),
        skillboxSequential: () => loadGenerator.run(skillboxPath, SEQUENTIAL_REQUESTS, 1),
        bareExecuteSequential: () => loadGenerator.run(bareExecutePath, SEQUENTIAL_REQUESTS, 1),
      },
      ROUNDS,
    );
    const audited = (await host.executor.countExecutions({ skill: "echo", status: "success" })) - before;
    const expected = 2 * ROUNDS * (REQUESTS + SEQUENTIAL_REQUESTS);
    if (audited !== expected) throw new Error(`expected ${expected} audited executions, found ${audited}`);

    const concurrentRatio = rates.skillboxConcurrent / rates.bareConcurrent;
    const sequentialRatio = rates.skillboxSequential / rates.bareSequential;
    const ratioTo = (rate, baseline) => `${(rate / baseline).toFixed(2)}x`;
    console.log(
      `HTTP API (POST ${skillboxPath}: API key, zod body, inline echo skill, audit trail on) ` +
        "vs a bare Hono route in the same server answering the same JSON",
    );
    printTable([
      ["", "bare route", "skillbox", "ratio", "target", "", "bare + execute()", "skillbox / that"],
      [
        `executions/s, ${CONCURRENCY} in flight`,
        formatRate(rates.bareConcurrent),
        formatRate(rates.skillboxConcurrent),
        `${concurrentRatio.toFixed(2)}x`,
        `>= ${TARGET}x`,
        verdict(concurrentRatio >= TARGET),
        `${formatRate(rates.bareExecuteConcurrent)} (${ratioTo(rates.bareExecuteConcurrent, rates.bareConcurrent)})`,
        ratioTo(rates.skillboxConcurrent, rates.bareExecuteConcurrent),
      ],
      [
        "executions/s, 1 in flight",
        formatRate(rates.bareSequential),
        formatRate(rates.skillboxSequential),
        `${sequentialRatio.toFixed(2)}x`,
        "(info)",
        "",
        `${formatRate(rates.bareExecuteSequential)} (${ratioTo(rates.bareExecuteSequential, rates.bareSequential)})`,
        ratioTo(rates.skillboxSequential, rates.bareExecuteSequential),
      ],
    ]);
    console.log(
      "  bare + execute(): a bare route calling executor.execute() itself (no auth, validation or " +
        "cancellation) — the cost of an audited execution, which any route pays",
    );
    console.log(
      `  (medians of ${ROUNDS} interleaved rounds of ${REQUESTS} requests at c=${CONCURRENCY} and ` +
        `${SEQUENTIAL_REQUESTS} at c=1; load generator: a worker thread, node:http keep-alive; ` +
        `${audited} audited executions; ${cpus().length} CPUs, Node ${process.version})`,
    );
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
    rmSync(directory, { recursive: true, force: true });
  }
}

/** The load generator as seen from the main thread: one request at a time to the worker. */
function startLoadGenerator(baseUrl) {
  const worker = new Worker(new URL(import.meta.url), { workerData: { baseUrl, apiKey: API_KEY } });
  let pending;
  worker.on("message", (message) => {
    const { resolve, reject } = pending;
    pending = undefined;
    if (message.error === undefined) resolve(message.result);
    else reject(new Error(message.error));
  });
  worker.on("error", (error) => pending?.reject(error));
  const ask = (command) =>
    new Promise((resolve, reject) => {
      pending = { resolve, reject };
      worker.postMessage(command);
    });
  let queue = Promise.resolve();
  const serially = (command) => {
    const result = queue.then(() => ask(command));
    queue = result.catch(() => {});
    return result;
  };
  return {
    /** Requests/s for `count` POSTs to `path` with `concurrency` in flight. */
    run: (path, count, concurrency) => serially({ kind: "run", path, count, concurrency }),
    /** One response body, parsed. */
    sample: (path) => serially({ kind: "sample", path }),
    close: () => worker.terminate(),
  };
}

/** Worker side: POSTs the same JSON body over keep-alive connections and measures the rate. */
function runLoadGenerator() {
  const { baseUrl, apiKey } = workerData;
  const { hostname, port } = new URL(baseUrl);
  const body = JSON.stringify({ input: { msg: "hello" } });
  const headers = {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    authorization: `Bearer ${apiKey}`,
  };
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const post = (path) =>
    new Promise((resolve, reject) => {
      const request = httpRequest({ hostname, port, path, method: "POST", headers, agent }, (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => {
          text += chunk;
        });
        response.on("end", () => {
          if (response.statusCode === 200) resolve(text);
          else reject(new Error(`POST ${path} answered ${response.statusCode}: ${text}`));
        });
      });
      request.on("error", reject);
      request.end(body);
    });
  const run = async (path, count, concurrency) => {
    let next = 0;
    const loop = async () => {
      while (next < count) {
        next++;
        await post(path);
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: concurrency }, loop));
    return count / ((performance.now() - started) / 1000);
  };
  parentPort.on("message", async (command) => {
    try {
      const result =
        command.kind === "sample"
          ? JSON.parse(await post(command.path))
          : await run(command.path, command.count, command.concurrency);
      parentPort.postMessage({ result });
    } catch (error) {
      parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) });
    }
  });
}
