import { context, propagation, ROOT_CONTEXT } from "@opentelemetry/api";
import { useRecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import createLoggerInterceptor, { type ExecutionLogLine } from "../index.ts";

const CALLER_TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const CALLER_TRACEPARENT = `00-${CALLER_TRACE_ID}-b7ad6b7169203331-01`;

const hosts: TemporaryHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose();
});

/** A host with the logger installed and an `echo` skill; `lines` collects the parsed lines. */
function hostWithLogger(): { host: TemporaryHost; lines: ExecutionLogLine[] } {
  const host = createTemporaryHost();
  hosts.push(host);
  const lines: ExecutionLogLine[] = [];
  host.executor.use(createLoggerInterceptor({ write: (line) => lines.push(JSON.parse(line)) }));
  host.registry.register({ name: "echo", version: "1.0.0", handler: "echo", apiKeyId: "public" });
  host.registry.register({ name: "outer", version: "1.0.0", handler: "outer", apiKeyId: "public" });
  host.executor.registerHandler("echo", (input: { msg?: string }) => ({ echoed: input.msg }));
  host.executor.registerHandler("outer", (_input, skillContext) => skillContext.call("echo", { msg: "in" }));
  return { host, lines };
}

// First, while no SDK is installed: the file installs one below and keeps it to the end.
describe("logger plugin without an OpenTelemetry SDK", () => {
  it("writes no trace_id or span_id", async () => {
    const { host, lines } = hostWithLogger();
    const execution = await host.executor.execute("echo", { msg: "hi" });
    expect(execution.traceId).toBeNull();
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toHaveProperty("trace_id");
    expect(lines[0]).not.toHaveProperty("span_id");
  });
});

describe("logger plugin with an OpenTelemetry SDK", () => {
  const telemetry = useRecordingTelemetry();

  it("adds the trace id and the execution span's id to the line", async () => {
    const { host, lines } = hostWithLogger();
    const execution = await host.executor.execute("echo", { msg: "hi" });
    const [span] = telemetry.named("execute_tool echo");
    expect(span).toBeDefined();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      executionId: execution.id,
      trace_id: span!.spanContext().traceId,
      span_id: span!.spanContext().spanId,
    });
    expect(lines[0]!.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(lines[0]!.span_id).toMatch(/^[0-9a-f]{16}$/);
  });

  it("carries the caller's trace id, and each nested execution's own span id", async () => {
    const { host, lines } = hostWithLogger();
    const caller = propagation.extract(ROOT_CONTEXT, { traceparent: CALLER_TRACEPARENT });
    const execution = await context.with(caller, () => host.executor.execute("outer", {}));
    expect(execution.status).toBe("success");
    expect(lines.map((line) => line.skill)).toEqual(["echo", "outer"]);
    expect(lines.map((line) => line.trace_id)).toEqual([CALLER_TRACE_ID, CALLER_TRACE_ID]);
    const [outerSpan] = telemetry.named("execute_tool outer");
    const [innerSpan] = telemetry
      .named("execute_tool echo")
      .filter((span) => span.spanContext().traceId === CALLER_TRACE_ID);
    expect(lines[1]!.span_id).toBe(outerSpan!.spanContext().spanId);
    expect(lines[0]!.span_id).toBe(innerSpan!.spanContext().spanId);
    expect(lines[0]!.span_id).not.toBe(lines[1]!.span_id);
  });
});
