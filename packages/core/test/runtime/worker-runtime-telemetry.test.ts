import { pathToFileURL } from "node:url";
import { context, ROOT_CONTEXT, type Span, trace } from "@opentelemetry/api";
import type { SkillRegistration } from "@skillbox/core";
import { createWorkerRuntime } from "@skillbox/core/internal";
import { handBuiltRequest, testSkill } from "@skillbox/test-helpers/runtime-request";
import { installRecordingTelemetry, type RecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

// The execution and attempt spans come from the executor; here a span of the test's own stands
// for the attempt, made active around runtime.run as the executor does.

/** A handler that makes a span of its own in the thread and reports what it saw there. */
const TRACED_HANDLER = [
  'import { trace } from "@opentelemetry/api";',
  "export default function traced(input, ctx) {",
  '  return trace.getTracer("fixture").startActiveSpan("handler span", async (span) => {',
  '    span.setAttribute("fixture.message", input.message);',
  '    span.addEvent("working");',
  "    const headers = ctx.traceHeaders();",
  '    const called = input.call ? await ctx.call("child", { from: span.spanContext().spanId }) : undefined;',
  "    span.end();",
  "    return { headers, spanId: span.spanContext().spanId, traceId: span.spanContext().traceId, called };",
  "  });",
  "}",
];

let telemetry: RecordingTelemetry;
let tree: TemporaryTree;
const runtimes: { close?(): Promise<void> }[] = [];

beforeAll(() => {
  telemetry = installRecordingTelemetry();
});
afterAll(async () => {
  await telemetry.close();
});
beforeEach(() => {
  tree = createTemporaryTree("skillbox-worker-trace-");
  tree.linkPackages("@opentelemetry/api");
  telemetry.reset();
});
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close?.();
  tree.cleanup();
});

function newRuntime() {
  const runtime = createWorkerRuntime({ maxThreads: 1 });
  runtimes.push(runtime);
  return runtime;
}

function tracedSkill(fields: Parameters<typeof testSkill>[1] = {}) {
  const file = tree.write("handlers/traced.mjs", `${TRACED_HANDLER.join("\n")}\n`);
  return testSkill("traced", { handler: pathToFileURL(file).href, runtime: "worker", ...fields });
}

/** Runs `work` inside an active `attempt 1` span, as the executor runs runtime.run. */
function inAttempt<T>(work: (attempt: Span) => Promise<T>): Promise<T> {
  return trace
    .getTracer("test")
    .startActiveSpan("attempt 1", (attempt) => work(attempt).finally(() => attempt.end()));
}

interface TracedOutput {
  headers: Record<string, string>;
  spanId: string;
  traceId: string;
  called?: { parent: string | undefined };
}

describe("worker runtime telemetry", () => {
  it("runs the handler under a `worker dispatch` span and replays its spans with their ids", async () => {
    const runtime = newRuntime();
    const { request } = handBuiltRequest(tracedSkill(), { message: "hello" });
    const output = (await inAttempt(() => runtime.run(request))) as TracedOutput;

    const [attempt] = telemetry.named("attempt 1");
    expect(telemetry.tree(attempt!)).toBe("attempt 1\n  worker dispatch\n    handler span");
    const [dispatch] = telemetry.named("worker dispatch");
    const [handlerSpan] = telemetry.named("handler span");
    expect(dispatch?.attributes).toMatchObject({
      "skillbox.runtime": "worker",
      "gen_ai.tool.name": "traced",
    });
    expect(dispatch?.attributes["thread.id"]).toEqual(expect.any(Number));
    // createSkillboxIdGenerator (the helper's default) keeps the id the span had in the thread.
    expect(handlerSpan?.spanContext().spanId).toBe(output.spanId);
    expect(handlerSpan?.spanContext().traceId).toBe(attempt?.spanContext().traceId);
    expect(handlerSpan?.attributes).toEqual({ "fixture.message": "hello" });
    expect(handlerSpan?.events.map((event) => event.name)).toEqual(["working"]);
    expect(output.headers).toEqual({ traceparent: `00-${output.traceId}-${output.spanId}-01` });
  });

  it("runs a traced worker's ctx.call on the host under the worker's span", async () => {
    const runtime = newRuntime();
    const built = handBuiltRequest(tracedSkill({ requires: { child: "*" } }), { message: "m", call: true });
    let parentAtCall: string | undefined;
    built.request.context.call = async <Output>() => {
      parentAtCall = trace.getActiveSpan()?.spanContext().spanId;
      return { parent: parentAtCall } as Output;
    };
    const output = (await inAttempt(() => runtime.run(built.request))) as TracedOutput;
    expect(parentAtCall).toBe(output.spanId);
    expect(telemetry.named("handler span")[0]?.spanContext().spanId).toBe(parentAtCall);
  });

  it("sends nothing and records nothing when no span is active", async () => {
    const runtime = newRuntime();
    const { request } = handBuiltRequest(tracedSkill(), { message: "quiet" });
    const output = (await context.with(ROOT_CONTEXT, () => runtime.run(request))) as TracedOutput;
    expect(output.headers).toEqual({});
    expect(telemetry.spans()).toEqual([]);
  });

  it("reports its threads by state, and none once it is closed", async () => {
    const runtime = newRuntime();
    const { request } = handBuiltRequest(tracedSkill(), { message: "count" });
    await runtime.run(request);
    const threadPoints = async () =>
      (await telemetry.collect())
        .filter((point) => point.name === "skillbox.worker_pool.threads")
        .map((point) => [point.attributes["skillbox.worker_pool.state"], point.value]);
    expect(await threadPoints()).toEqual([
      ["busy", 0],
      ["idle", 1],
    ]);
    await runtime.close?.();
    expect(await threadPoints()).toEqual([
      ["busy", 0],
      ["idle", 0],
    ]);
  });
});

describe("worker executions in a trace", () => {
  const hosts: TemporaryHost[] = [];
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.dispose();
  });

  function newHost(): TemporaryHost {
    return newHostWith({});
  }

  function newHostWith(options: { telemetry?: false }) {
    const host = createTemporaryHost({ worker: { maxThreads: 2 }, ...options });
    hosts.push(host);
    return host;
  }

  function register(
    host: TemporaryHost,
    name: string,
    lines: string[],
    fields: Partial<SkillRegistration> = {},
  ) {
    const file = tree.write(`handlers/${name}.mjs`, `${lines.join("\n")}\n`);
    host.registry.register({
      name,
      version: "1.0.0",
      apiKeyId: "public",
      handler: pathToFileURL(file).href,
      runtime: "worker",
      ...fields,
    });
  }

  it("nests the handler's span under execute_tool → attempt 1 → worker dispatch", async () => {
    const host = newHost();
    register(host, "traced", TRACED_HANDLER);
    const execution = await host.executor.execute("traced", { message: "hi" });
    expect(execution.status).toBe("success");
    const [root] = telemetry.named("execute_tool traced");
    expect(telemetry.tree(root!)).toBe(
      "execute_tool traced\n  attempt 1\n    worker dispatch\n      handler span",
    );
    expect(telemetry.named("handler span")[0]?.spanContext().spanId).toBe(
      (execution.output as TracedOutput).spanId,
    );
  });

  it("traces nothing of a host with telemetry off, even under a caller's recording span", async () => {
    const host = newHostWith({ telemetry: false });
    register(host, "traced", TRACED_HANDLER);
    const caller = trace.getTracer("test").startSpan("caller");
    const execution = await context.with(trace.setSpan(ROOT_CONTEXT, caller), () =>
      host.executor.execute("traced", { message: "hi" }),
    );
    caller.end();
    expect(execution).toMatchObject({ status: "success", traceId: null, spanId: null });
    // No dispatch span, no relayed span: only the caller's own.
    expect(telemetry.spans().map((span) => span.name)).toEqual(["caller"]);
  });

  it("makes a worker's nested ctx.call a child of the worker span it was called in", async () => {
    const host = newHost();
    host.executor.registerHandler("child-handler", (input) => input);
    host.registry.register({ name: "child", version: "1.0.0", apiKeyId: "public", handler: "child-handler" });
    register(host, "traced", TRACED_HANDLER, { requires: { child: "*" } });
    const execution = await host.executor.execute("traced", { message: "hi", call: true });
    expect(execution.error).toBeNull();
    const [root] = telemetry.named("execute_tool traced");
    expect(telemetry.tree(root!)).toBe(
      [
        "execute_tool traced",
        "  attempt 1",
        "    worker dispatch",
        "      handler span",
        "        execute_tool child",
        "          attempt 1",
      ].join("\n"),
    );
  });
});
