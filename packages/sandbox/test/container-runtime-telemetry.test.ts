import { pathToFileURL } from "node:url";
import { type Span, trace } from "@opentelemetry/api";
import { createContainerRuntime, createPodmanProvider, SandboxRunner } from "@skillbox/sandbox";
import {
  describeWithEngine,
  podmanRequirement,
  removeLeftoverContainers,
  TEST_IMAGE,
} from "@skillbox/test-helpers/engine-availability";
import { handBuiltRequest, testSkill } from "@skillbox/test-helpers/runtime-request";
import { installRecordingTelemetry, type RecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { createTemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";

// The execution and attempt spans come from the executor; a span of the test's own stands for the
// attempt here, made active around runtime.run as the executor does.

/** A handler that makes a span of its own in the sandbox; `@opentelemetry/api` is the runner's. */
const TRACED_HANDLER = [
  'import { trace } from "@opentelemetry/api";',
  "export default function traced(input, ctx) {",
  '  return trace.getTracer("fixture").startActiveSpan("handler span", async (span) => {',
  '    span.setAttribute("fixture.message", input.message);',
  "    const headers = ctx.traceHeaders();",
  "    span.end();",
  "    return { headers, spanId: span.spanContext().spanId, traceId: span.spanContext().traceId };",
  "  });",
  "}",
];

interface TracedOutput {
  headers: Record<string, string>;
  spanId: string;
  traceId: string;
}

/** Runs `work` inside an active `attempt 1` span, as the executor runs runtime.run. */
function inAttempt<T>(work: (attempt: Span) => Promise<T>): Promise<T> {
  return trace
    .getTracer("test")
    .startActiveSpan("attempt 1", (attempt) => work(attempt).finally(() => attempt.end()));
}

describeWithEngine("container runtime telemetry (podman)", podmanRequirement(), () => {
  const runner = new SandboxRunner({ provider: createPodmanProvider() });
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
    tree = createTemporaryTree("skillbox-container-trace-");
    telemetry.reset();
  });
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close?.();
    await runner.killAll();
    removeLeftoverContainers();
    tree.cleanup();
  });

  function newRuntime(options: { warmPoolSize?: number } = {}) {
    const runtime = createContainerRuntime({ runner, defaultImage: TEST_IMAGE, ...options });
    runtimes.push(runtime);
    return runtime;
  }

  function tracedSkill() {
    const file = tree.write("traced/index.mjs", `${TRACED_HANDLER.join("\n")}\n`);
    return testSkill("traced", { handler: pathToFileURL(file).href, runtime: "container" });
  }

  it("starts the sandbox and runs the handler under spans of the attempt, replaying the handler's spans", async () => {
    const runtime = newRuntime();
    const { request } = handBuiltRequest(tracedSkill(), { message: "hello" });
    const output = (await inAttempt(() => runtime.run(request))) as TracedOutput;

    const [attempt] = telemetry.named("attempt 1");
    expect(telemetry.tree(attempt!)).toBe("attempt 1\n  sandbox start\n  sandbox run\n    handler span");
    const [start] = telemetry.named("sandbox start");
    expect(start?.attributes).toMatchObject({
      "skillbox.runtime": "container",
      "skillbox.sandbox.provider": "podman",
      "skillbox.sandbox.image": TEST_IMAGE,
      "skillbox.sandbox.warm": false,
    });
    const [handlerSpan] = telemetry.named("handler span");
    expect(handlerSpan?.spanContext().spanId).toBe(output.spanId);
    expect(handlerSpan?.spanContext().traceId).toBe(attempt?.spanContext().traceId);
    expect(handlerSpan?.attributes).toEqual({ "fixture.message": "hello" });
    expect(output.headers).toEqual({ traceparent: `00-${output.traceId}-${output.spanId}-01` });
  });

  it("puts the sandbox's spans under execute_tool → attempt 1 of a container execution", async () => {
    const runtime = newRuntime();
    const host = createTemporaryHost({ runtimes: [runtime] });
    try {
      const file = tree.write("traced/index.mjs", `${TRACED_HANDLER.join("\n")}\n`);
      host.registry.register({
        name: "traced",
        version: "1.0.0",
        apiKeyId: "public",
        handler: pathToFileURL(file).href,
        runtime: "container",
      });
      const execution = await host.executor.execute("traced", { message: "in a host" });
      expect(execution.error).toBeNull();
      const [root] = telemetry.named("execute_tool traced");
      expect(telemetry.tree(root!)).toBe(
        "execute_tool traced\n  attempt 1\n    sandbox start\n    sandbox run\n      handler span",
      );
    } finally {
      await host.dispose();
    }
  });

  it("leaves the spans out, counted, of a result line they would push past the output limit", async () => {
    const runtime = newRuntime();
    const file = tree.write(
      "many/index.mjs",
      [
        'import { trace } from "@opentelemetry/api";',
        "export default function many() {",
        '  const tracer = trace.getTracer("fixture");',
        "  for (let index = 0; index < 256; index++) {",
        '    tracer.startSpan("span " + index, { attributes: { filler: "x".repeat(1000) } }).end();',
        "  }",
        "  // With the spans, the line would pass the 1 MiB the host reads.",
        '  return { big: "y".repeat(900 * 1024) };',
        "}",
      ].join("\n"),
    );
    const skill = testSkill("many", { handler: pathToFileURL(file).href, runtime: "container" });
    const output = (await inAttempt(() => runtime.run(handBuiltRequest(skill, {}).request))) as {
      big: string;
    };
    expect(output.big).toHaveLength(900 * 1024);
    const [run] = telemetry.named("sandbox run");
    expect(run?.attributes["skillbox.telemetry.spans_dropped"]).toBe(256);
    expect(telemetry.childrenOf(run!)).toEqual([]);
  });

  it("marks a sandbox taken from the warm pool as a warm start", async () => {
    const runtime = newRuntime({ warmPoolSize: 1 });
    const skill = tracedSkill();
    await runtime.warmUp(skill);
    const { request } = handBuiltRequest(skill, { message: "warm" });
    await inAttempt(() => runtime.run(request));
    expect(telemetry.named("sandbox start")[0]?.attributes["skillbox.sandbox.warm"]).toBe(true);
    expect(telemetry.named("handler span")).toHaveLength(1);
  });

  it("gives a command skill the attempt's TRACEPARENT in its environment", async () => {
    const runtime = newRuntime();
    const skill = testSkill("env-carrier", {
      runtime: "container",
      sandbox: {
        image: TEST_IMAGE,
        command: [
          "node",
          "-e",
          "console.log(JSON.stringify({ traceparent: process.env.TRACEPARENT ?? null }))",
        ],
      },
    });
    const { request } = handBuiltRequest(skill, {});
    let expected = "";
    const output = await inAttempt((attempt) => {
      const { traceId, spanId } = attempt.spanContext();
      expected = `00-${traceId}-${spanId}-01`;
      return runtime.run(request);
    });
    expect(output).toEqual({ traceparent: expected });
  });

  it("runs untraced, with empty trace headers, when no span is active", async () => {
    const runtime = newRuntime();
    const { request } = handBuiltRequest(tracedSkill(), { message: "quiet" });
    const output = (await runtime.run(request)) as TracedOutput;
    expect(output.headers).toEqual({});
    expect(telemetry.spans()).toEqual([]);
  });
});
