import { writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { type CliProject, createCliProject, type RunningCli } from "@skillbox/test-helpers/cli-process";
import type { TreeContent } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { echoFolder } from "../../packages/cli/test/cli-fixtures.js";
import {
  ancestryOf,
  type OtlpReceiver,
  type ReceivedSpan,
  renderWaterfall,
  startOtlpReceiver,
} from "./otlp-receiver.js";

const LISTENING = /listening\s+(http:\/\/[^\s]+) \(MCP at /;
const CALLER_SPAN_ID = "b7ad6b7169203331";
const FIRST_TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const SECOND_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const THIRD_TRACE_ID = "5b8efff798038103d269b633813fc60c";
const traceparentOf = (traceId: string) => `00-${traceId}-${CALLER_SPAN_ID}-01`;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

const repositoryPlugin = (name: string) => fileURLToPath(new URL(`../../plugins/${name}`, import.meta.url));

/**
 * `forecast`: a worker skill whose first attempt fails (so there is a retry) and whose second
 * asks the weather service through `ctx.call("http-request")`.
 */
function forecastFolder(): Record<string, TreeContent> {
  return {
    "skill.json": {
      name: "forecast",
      version: "1.0.0",
      description: "Tomorrow's forecast for a city, from the weather service",
      handler: "./index.mjs",
      runtime: "worker",
      requires: { "http-request": "^1.0.0" },
      retry: { maxAttempts: 2, initialDelayMs: 40 },
      input: {
        type: "object",
        properties: { city: { type: "string" }, url: { type: "string" } },
        required: ["city", "url"],
      },
    },
    "index.mjs": [
      'import { existsSync, writeFileSync } from "node:fs";',
      "",
      'const marker = new URL("./.warmed-up", import.meta.url);',
      "",
      "export default async function forecast(input, ctx) {",
      "  if (!existsSync(marker)) {",
      '    writeFileSync(marker, "");',
      '    throw new Error("the weather station is warming up");',
      "  }",
      '  const reply = await ctx.call("http-request", { url: input.url });',
      "  return { city: input.city, upstream: reply.status };",
      "}",
      "",
    ].join("\n"),
  };
}

/** A loopback server recording the headers of every request it gets (what http-request sends). */
interface Downstream {
  url: string;
  headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

async function startDownstream(): Promise<Downstream> {
  const headers: IncomingHttpHeaders[] = [];
  const server: Server = createServer((request, response) => {
    headers.push(request.headers);
    response.writeHead(200, { "content-type": "application/json" });
    response.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/resource`,
    headers,
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

let project: CliProject;
let receiver: OtlpReceiver;
let downstream: Downstream;

beforeEach(async () => {
  project = createCliProject();
  project.tree.writeFolder("plugins/echo", echoFolder());
  // The repository's own built-ins, loaded as a user's project loads them.
  project.tree.symlink(repositoryPlugin("http-request"), "plugins/http-request");
  project.tree.symlink(repositoryPlugin("logger"), "plugins/logger");
  receiver = await startOtlpReceiver();
  downstream = await startDownstream();
});

afterEach(async () => {
  await project.cleanup();
  await receiver.close();
  await downstream.close();
});

/**
 * Environment of a served project: http-request may reach the loopback downstream server (the
 * developer's own OTEL_* variables are cleared by cli-process).
 */
const SERVE_ENVIRONMENT: Record<string, string | undefined> = { SKILLBOX_HTTP_ALLOW_PRIVATE: "127.0.0.1" };

/** Environment that asks `serve` to export to the receiver, in OTLP/JSON so the test can read it. */
function exportEnvironment(): Record<string, string | undefined> {
  return {
    ...SERVE_ENVIRONMENT,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    // Small batches and intervals only make the test quicker; it waits for what it expects.
    OTEL_BSP_SCHEDULE_DELAY: "100",
    OTEL_METRIC_EXPORT_INTERVAL: "1000",
  };
}

async function execute(url: string, name: string, input: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/api/skills/${name}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ input }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function startServe(
  env: Record<string, string | undefined>,
): Promise<{ server: RunningCli; url: string }> {
  const server = project.start(["serve", "--port", "0"], { env });
  const [, url] = await server.waitForOutput(LISTENING);
  return { server, url: url! };
}

const named = (name: string, traceId: string) => (span: ReceivedSpan) =>
  span.name === name && span.traceId === traceId;

describe("skillbox serve with OTEL_EXPORTER_OTLP_ENDPOINT", { timeout: 90_000 }, () => {
  it("exports the spans of an inbound request's trace and sends its traceparent on from http-request", async () => {
    const { server, url } = await startServe(exportEnvironment());
    expect(server.stdout()).toMatch(
      new RegExp(`telemetry\\s+OpenTelemetry: traces to ${receiver.url}/v1/traces \\(http/json\\)`),
    );

    const echoed = await execute(
      url,
      "echo",
      { msg: "traced" },
      { traceparent: traceparentOf(FIRST_TRACE_ID) },
    );
    expect(echoed.body).toMatchObject({ status: "success", output: { echoed: "traced" } });
    const executionSpan = await receiver.waitFor(
      () => receiver.spans().find(named("execute_tool echo", FIRST_TRACE_ID)),
      "execute_tool echo span in the caller's trace",
    );
    expect(executionSpan).toMatchObject({
      serviceName: "skillbox",
      scope: "@skillbox/core",
      attributes: expect.objectContaining({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "echo",
        "skillbox.execution.id": echoed.body.id,
        "skillbox.status": "success",
      }),
    });
    // Inputs and outputs stay out unless the config opts in.
    expect(executionSpan.attributes).not.toHaveProperty("gen_ai.tool.call.arguments");
    expect(executionSpan.attributes).not.toHaveProperty("gen_ai.tool.call.result");
    // The execution hangs (through the server's span, when it is there) off the caller's span.
    const chain = ancestryOf(receiver.spans(), executionSpan);
    expect(chain.at(-1)?.parentSpanId).toBe(CALLER_SPAN_ID);
    // The logger plugin's line of that execution names its trace and span.
    await server.waitForOutput(
      new RegExp(`"trace_id":"${FIRST_TRACE_ID}","span_id":"${executionSpan.spanId}"`),
    );

    const fetched = await execute(
      url,
      "http-request",
      { url: downstream.url },
      { traceparent: traceparentOf(SECOND_TRACE_ID) },
    );
    expect(fetched.body).toMatchObject({ status: "success", output: { status: 200 } });
    expect(downstream.headers).toHaveLength(1);
    const sent = TRACEPARENT.exec(String(downstream.headers[0]?.traceparent));
    expect(sent, `traceparent sent downstream: ${downstream.headers[0]?.traceparent}`).not.toBeNull();
    expect(sent![1]).toBe(SECOND_TRACE_ID);
    // The span it names was exported, under the http-request execution.
    const sentFrom = await receiver.waitFor(
      () => receiver.spans().find((span) => span.traceId === SECOND_TRACE_ID && span.spanId === sent![2]),
      `span ${sent![2]} named by the downstream traceparent`,
    );
    const names = ancestryOf(receiver.spans(), sentFrom).map((span) => span.name);
    expect(names).toContain("execute_tool http-request");

    const stopped = await server.stop("SIGTERM");
    expect(stopped.code).toBe(0);
    // Metrics too, flushed at the latest when the server stopped.
    const metricNames = new Set(receiver.metrics().map((metric) => metric.name));
    expect(metricNames).toContain("skillbox.executions");
    expect(receiver.requests.every((request) => request.contentType === "application/json")).toBe(true);
  });

  it("makes one trace of a worker skill's retried attempts, its nested http-request call and what that sent", async () => {
    project.tree.symlink(repositoryPlugin("policy"), "plugins/policy");
    project.tree.writeFolder("plugins/forecast", forecastFolder());
    const { server, url } = await startServe(exportEnvironment());
    const forecast = await execute(
      url,
      "forecast",
      { city: "Lisbon", url: downstream.url },
      { traceparent: traceparentOf(THIRD_TRACE_ID) },
    );
    expect(forecast.body).toMatchObject({ status: "success", attempts: 2, output: { upstream: 200 } });
    const sent = TRACEPARENT.exec(String(downstream.headers[0]?.traceparent));
    expect(sent?.[1]).toBe(THIRD_TRACE_ID);
    const root = await receiver.waitFor(
      () => receiver.spans().find(named("execute_tool forecast", THIRD_TRACE_ID)),
      "execute_tool forecast span",
    );
    await receiver.waitFor(
      () => receiver.spans().find((span) => span.spanId === sent![2]),
      "the span the downstream traceparent names",
    );
    expect((await server.stop()).code).toBe(0);

    const spans = receiver.spans();
    expect(root.attributes).toMatchObject({ "skillbox.runtime": "worker", "skillbox.attempts": 2 });
    const waterfall = renderWaterfall(spans, THIRD_TRACE_ID);
    // docs/observability.md shows this rendering: SKILLBOX_TRACE_WATERFALL=<file> writes it out.
    if (process.env.SKILLBOX_TRACE_WATERFALL) {
      writeFileSync(process.env.SKILLBOX_TRACE_WATERFALL, `${waterfall}\n`);
    }
    const tree = waterfall.split("\n").map((line) => line.slice(line.lastIndexOf("| ") + 2));
    expect(tree).toEqual([
      expect.stringMatching(/^POST /),
      "  execute_tool forecast",
      "    interceptors before",
      "    attempt 1",
      "      worker dispatch",
      "    retry backoff",
      "    attempt 2",
      "      worker dispatch",
      "        execute_tool http-request",
      "          interceptors before",
      "          attempt 1",
    ]);
    // What http-request sent names its attempt: the downstream service's spans join this tree.
    const sentFrom = spans.find((span) => span.spanId === sent![2]);
    expect(
      ancestryOf(spans, sentFrom!)
        .map((span) => span.name)
        .slice(0, 2),
    ).toEqual(["attempt 1", "execute_tool http-request"]);
  });

  it("flushes the last spans when it stops", async () => {
    // A long batch delay: nothing is exported before shutdown flushes it.
    const { server, url } = await startServe({ ...exportEnvironment(), OTEL_BSP_SCHEDULE_DELAY: "600000" });
    const echoed = await execute(
      url,
      "echo",
      { msg: "last" },
      { traceparent: traceparentOf(FIRST_TRACE_ID) },
    );
    expect(echoed.body).toMatchObject({ status: "success" });
    expect(receiver.spans().filter(named("execute_tool echo", FIRST_TRACE_ID))).toEqual([]);
    expect((await server.stop("SIGINT")).code).toBe(0);
    expect(receiver.spans().filter(named("execute_tool echo", FIRST_TRACE_ID))).toHaveLength(1);
  });
});

describe("skillbox serve with only OTEL_EXPORTER_OTLP_ENDPOINT", { timeout: 90_000 }, () => {
  it("exports protobuf, the OTLP default", async () => {
    const { server, url } = await startServe({
      ...SERVE_ENVIRONMENT,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    });
    expect(server.stdout()).toMatch(/traces to \S+\/v1\/traces \(http\/protobuf\)/);
    await execute(url, "echo", { msg: "x" });
    expect((await server.stop()).code).toBe(0);
    const traces = receiver.requests.filter((request) => request.path === "/v1/traces");
    expect(traces.length).toBeGreaterThan(0);
    expect(traces.every((request) => request.contentType === "application/x-protobuf")).toBe(true);
  });
});

/** A loopback collector that refuses every export with 401 and a text answer, as one given a wrong API key does. */
async function startRefusingCollector(): Promise<{ url: string; refused(): number; close(): Promise<void> }> {
  let refused = 0;
  const collector = createServer((request, response) => {
    request.resume();
    refused += 1;
    response.writeHead(401, { "content-type": "text/plain" });
    response.end("bad API key");
  });
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
  const { port } = collector.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    refused: () => refused,
    close() {
      collector.closeAllConnections();
      return new Promise((resolve) => collector.close(() => resolve()));
    },
  };
}

describe("skillbox serve with a collector that refuses the exports", { timeout: 90_000 }, () => {
  it("logs the first failed export once, and still stops cleanly", async () => {
    const collector = await startRefusingCollector();
    try {
      const { server, url } = await startServe({
        ...exportEnvironment(),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      });
      await execute(url, "echo", { msg: "one" });
      await server.waitForOutput(
        /telemetry\s+export failed: HTTP 401 Unauthorized: bad API key \(check the collector/,
      );
      await execute(url, "echo", { msg: "two" });
      const stopped = await server.stop();
      expect(stopped.code).toBe(0);
      expect(collector.refused()).toBeGreaterThan(1);
      expect(stopped.stdout.match(/export failed/g)).toHaveLength(1);
    } finally {
      await collector.close();
    }
  });

  it("names the HTTP status and the collector's answer when a metrics export fails", async () => {
    // Metrics only: the metric reader re-wraps an export error as text, dropping both.
    const collector = await startRefusingCollector();
    try {
      const { server } = await startServe({
        ...exportEnvironment(),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_TRACES_EXPORTER: "none",
      });
      await server.waitForOutput(/telemetry\s+export failed: /);
      const stopped = await server.stop();
      expect(stopped.code).toBe(0);
      expect(stopped.stdout).toMatch(
        /telemetry\s+export failed: HTTP 401 Unauthorized: bad API key \(check the collector/,
      );
      expect(stopped.stdout.match(/export failed/g)).toHaveLength(1);
    } finally {
      await collector.close();
    }
  });
});

describe("skillbox dev with OTEL_EXPORTER_OTLP_ENDPOINT", { timeout: 90_000 }, () => {
  it("exports too, and flushes on Ctrl-C", async () => {
    const server = project.start(["dev", "--port", "0"], { env: exportEnvironment() });
    const [, url] = await server.waitForOutput(LISTENING);
    expect(server.stdout()).toMatch(/telemetry\s+OpenTelemetry: traces to /);
    await execute(url!, "echo", { msg: "dev" }, { traceparent: traceparentOf(FIRST_TRACE_ID) });
    expect((await server.stop("SIGINT")).code).toBe(0);
    expect(receiver.spans().filter(named("execute_tool echo", FIRST_TRACE_ID))).toHaveLength(1);
  });
});

describe("skillbox serve without export variables", { timeout: 90_000 }, () => {
  it("starts no SDK: no telemetry line, no traceparent sent on, nothing exported", async () => {
    const { server, url } = await startServe(SERVE_ENVIRONMENT);
    const fetched = await execute(
      url,
      "http-request",
      { url: downstream.url },
      { traceparent: traceparentOf(SECOND_TRACE_ID) },
    );
    expect(fetched.body).toMatchObject({ status: "success" });
    expect(downstream.headers[0]?.traceparent).toBeUndefined();
    expect(fetched.body.traceId ?? null).toBeNull();
    const stopped = await server.stop();
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).not.toMatch(/telemetry/);
    expect(stopped.stdout).not.toMatch(/"trace_id"/);
  });

  it("exports nothing with OTEL_SDK_DISABLED=true, even with an endpoint set", async () => {
    const { server, url } = await startServe({ ...exportEnvironment(), OTEL_SDK_DISABLED: "true" });
    const echoed = await execute(url, "echo", { msg: "x" }, { traceparent: traceparentOf(FIRST_TRACE_ID) });
    expect(echoed.body).toMatchObject({ status: "success" });
    const stopped = await server.stop();
    expect(stopped.code).toBe(0);
    // Stopping flushes an SDK that runs: had one started, its export would have arrived by now.
    expect(receiver.requests).toEqual([]);
    expect(stopped.stdout).not.toMatch(/telemetry/);
  });
});

describe("skillbox serve with a telemetry block in skillbox.config.ts", { timeout: 90_000 }, () => {
  it("exports without OTEL_* variables, its fields winning over the variables", async () => {
    project.tree.symlink(repositoryPlugin("redact"), "plugins/redact");
    project.tree.write(
      "skillbox.config.ts",
      [
        'import { defineConfig } from "skillbox";',
        "",
        "export default defineConfig({",
        "  telemetry: {",
        `    endpoint: "${receiver.url}",`,
        '    protocol: "http/json",',
        '    serviceName: "tools-from-config",',
        '    headers: { "x-api-key": "k1" },',
        "    recordInputs: true,",
        "    recordOutputs: true,",
        "  },",
        "});",
        "",
      ].join("\n"),
    );
    const { server, url } = await startServe({
      ...SERVE_ENVIRONMENT,
      OTEL_SERVICE_NAME: "from-environment",
      // The file's protocol wins: protobuf would not parse as JSON.
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
    const input = { msg: "x", password: "hunter2" };
    await execute(url, "echo", input, { traceparent: traceparentOf(FIRST_TRACE_ID) });
    const span = await receiver.waitFor(
      () => receiver.spans().find(named("execute_tool echo", FIRST_TRACE_ID)),
      "execute_tool echo span",
    );
    expect(span.serviceName).toBe("tools-from-config");
    expect(receiver.requests[0]?.headers["x-api-key"]).toBe("k1");
    // Inputs and outputs as the audit trail keeps them: through the redact plugin's `audit` hook.
    expect(JSON.parse(String(span.attributes["gen_ai.tool.call.arguments"]))).toEqual({
      msg: "x",
      password: "[REDACTED]",
    });
    expect(JSON.parse(String(span.attributes["gen_ai.tool.call.result"]))).toEqual({ echoed: "x" });
    expect((await server.stop()).code).toBe(0);
  });
});
