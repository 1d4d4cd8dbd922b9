import { context, ROOT_CONTEXT, SpanStatusCode, trace } from "@opentelemetry/api";
import { defineInterceptor, SkillboxError } from "@skillbox/core";
import { useRecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { registerSkill, useTemporaryHosts } from "../executor/executor-test-bed.js";

const telemetry = useRecordingTelemetry();

const newHost = useTemporaryHosts();

/** The one ended `execute_tool <skill>` span. */
function executionSpan(skill: string) {
  const spans = telemetry.named(`execute_tool ${skill}`);
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

describe("execute_tool spans", () => {
  it("records one span per execution with the GenAI attributes, and its ids on the record", async () => {
    const host = newHost();
    registerSkill(host, { name: "echo", description: "Returns its input" });
    host.executor.registerHandler("echo", (input) => input);
    const execution = await host.executor.execute(
      "echo",
      { msg: "hi" },
      { apiKeyId: "public", toolCallId: "call_1" },
    );
    const span = executionSpan("echo");
    expect(span.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "echo",
      "gen_ai.tool.call.id": "call_1",
      "gen_ai.tool.description": "Returns its input",
      "gen_ai.tool.type": "function",
      "skillbox.execution.id": execution.id,
      "skillbox.skill.version": "1.0.0",
      "skillbox.owner": "public",
      "skillbox.runtime": "inline",
      "skillbox.status": "success",
      "skillbox.attempts": 1,
    });
    // Inputs and outputs only when the operator opts in.
    expect(span.attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
    expect(execution.traceId).toBe(span.spanContext().traceId);
    expect(execution.spanId).toBe(span.spanContext().spanId);
    // The audit trail keeps the same ids.
    expect(await host.executor.getExecution(execution.id)).toMatchObject({
      traceId: execution.traceId,
      spanId: execution.spanId,
    });
    expect(telemetry.tree(span)).toBe("execute_tool echo\n  attempt 1");
  });

  it("continues the caller's active span", async () => {
    const host = newHost();
    registerSkill(host, { name: "echo" });
    host.executor.registerHandler("echo", (input) => input);
    const caller = trace.getTracer("test").startSpan("caller");
    const execution = await context.with(trace.setSpan(ROOT_CONTEXT, caller), () =>
      host.executor.execute("echo", {}),
    );
    caller.end();
    const span = executionSpan("echo");
    expect(span.parentSpanContext?.spanId).toBe(caller.spanContext().spanId);
    expect(execution.traceId).toBe(caller.spanContext().traceId);
  });

  it("shows each attempt of a retried execution and the backoff between them", async () => {
    const host = newHost();
    registerSkill(host, {
      name: "flaky",
      retry: { maxAttempts: 3, initialDelayMs: 5, backoffCoefficient: 1, maxDelayMs: 5 },
    });
    let calls = 0;
    host.executor.registerHandler("flaky", () => {
      calls += 1;
      if (calls < 3) throw new SkillboxError("UPSTREAM_UNAVAILABLE", "try again", { retryable: true });
      return { ok: true };
    });
    const execution = await host.executor.execute("flaky", {});
    expect(execution.status).toBe("success");
    const span = executionSpan("flaky");
    expect(telemetry.tree(span)).toBe(
      [
        "execute_tool flaky",
        "  attempt 1",
        "  retry backoff",
        "  attempt 2",
        "  retry backoff",
        "  attempt 3",
      ].join("\n"),
    );
    const [first, backoff] = telemetry.childrenOf(span);
    expect(first!.status.code).toBe(SpanStatusCode.ERROR);
    expect(first!.attributes["error.type"]).toBe("UPSTREAM_UNAVAILABLE");
    // The policy's 5 ms, with its jitter.
    expect(backoff!.attributes["skillbox.retry.delay_ms"]).toBeGreaterThan(0);
    expect(span.attributes["skillbox.attempts"]).toBe(3);
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("nests a ctx.call execution under the parent's attempt", async () => {
    const host = newHost();
    registerSkill(host, { name: "child" });
    registerSkill(host, { name: "parent", requires: { child: "^1.0.0" } });
    host.executor.registerHandler("child", () => ({ child: true }));
    host.executor.registerHandler("parent", (_input, ctx) => ctx.call("child", {}));
    const execution = await host.executor.execute("parent", {});
    expect(execution.status).toBe("success");
    const parent = executionSpan("parent");
    expect(telemetry.tree(parent)).toBe(
      ["execute_tool parent", "  attempt 1", "    execute_tool child", "      attempt 1"].join("\n"),
    );
    const child = executionSpan("child");
    expect(child.attributes["skillbox.parent_execution.id"]).toBe(execution.id);
  });

  it("shows an interceptor's denial on its phase's span and on the execution", async () => {
    const host = newHost({
      interceptors: [
        defineInterceptor({ name: "audit-first", order: 1, before() {} }),
        defineInterceptor({
          name: "guard",
          order: 2,
          before() {
            throw new SkillboxError("DENIED", "not today");
          },
        }),
      ],
    });
    registerSkill(host, { name: "echo" });
    host.executor.registerHandler("echo", (input) => input);
    const execution = await host.executor.execute("echo", {});
    expect(execution.status).toBe("denied");
    const span = executionSpan("echo");
    expect(telemetry.tree(span)).toBe("execute_tool echo\n  interceptors before");
    const [phase] = telemetry.childrenOf(span);
    expect(phase!.status).toMatchObject({ code: SpanStatusCode.ERROR, message: "not today" });
    expect(phase!.attributes).toMatchObject({
      "error.type": "DENIED",
      "skillbox.interceptor.name": "guard",
      "skillbox.interceptors": ["audit-first", "guard"],
    });
    expect(span.attributes).toMatchObject({ "skillbox.status": "denied", "skillbox.error.code": "DENIED" });
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
  });

  it("gives each phase one span, and an asynchronous hook a span of its own within it", async () => {
    const host = newHost({
      interceptors: [
        defineInterceptor({ name: "quick", order: 1, before() {}, after() {} }),
        defineInterceptor({
          name: "remote-policy",
          order: 2,
          async before() {
            await new Promise((resolve) => setTimeout(resolve, 5));
          },
        }),
      ],
    });
    registerSkill(host, { name: "echo" });
    host.executor.registerHandler("echo", (input) => input);
    await host.executor.execute("echo", {});
    const span = executionSpan("echo");
    expect(telemetry.tree(span)).toBe(
      [
        "execute_tool echo",
        "  interceptors before",
        "    interceptor remote-policy before",
        "  attempt 1",
        "  interceptors after",
      ].join("\n"),
    );
    const [before, , after] = telemetry.childrenOf(span);
    expect(before!.attributes["skillbox.interceptors"]).toEqual(["quick", "remote-policy"]);
    expect(after!.attributes["skillbox.interceptors"]).toEqual(["quick"]);
  });

  it("marks an idempotent replay and links it to the execution that answered", async () => {
    const host = newHost();
    registerSkill(host, { name: "echo" });
    host.executor.registerHandler("echo", (input) => input);
    const first = await host.executor.execute("echo", { n: 1 }, { idempotencyKey: "k" });
    const again = await host.executor.execute("echo", { n: 1 }, { idempotencyKey: "k" });
    expect(again.id).toBe(first.id);
    const spans = telemetry.named("execute_tool echo");
    expect(spans).toHaveLength(2);
    const replay = spans.find((span) => span.attributes["skillbox.idempotency.replay"] === true)!;
    expect(replay.attributes["skillbox.execution.id"]).toBe(first.id);
    expect(telemetry.childrenOf(replay)).toEqual([]);
    expect(replay.links[0]?.context.spanId).toBe(first.spanId);
  });

  it("records the redacted input and the output when the operator opts in", async () => {
    const host = newHost({
      telemetry: { recordInputs: true, recordOutputs: true },
      interceptors: [
        defineInterceptor({
          name: "redact",
          audit: (_context, entry) => ("input" in entry ? { input: { secret: "[redacted]" } } : entry),
        }),
      ],
    });
    registerSkill(host, { name: "echo" });
    host.executor.registerHandler("echo", () => ({ echoed: "out" }));
    await host.executor.execute("echo", { secret: "hunter2" });
    const span = executionSpan("echo");
    expect(span.attributes["gen_ai.tool.call.arguments"]).toBe('{"secret":"[redacted]"}');
    expect(span.attributes["gen_ai.tool.call.result"]).toBe('{"echoed":"out"}');
  });

  it("makes no span and records no ids with telemetry off", async () => {
    const host = newHost({ telemetry: false });
    registerSkill(host, { name: "echo" });
    host.executor.registerHandler("echo", (input) => input);
    const execution = await host.executor.execute("echo", {});
    expect(telemetry.spans()).toEqual([]);
    expect(execution).toMatchObject({ traceId: null, spanId: null });
  });

  it("hands the handler the attempt's trace context for outbound calls", async () => {
    const host = newHost();
    registerSkill(host, { name: "outbound" });
    host.executor.registerHandler("outbound", (_input, ctx) => ctx.traceHeaders());
    const execution = await host.executor.execute("outbound", {});
    const attempt = telemetry.named("attempt 1")[0]!;
    expect(execution.output).toEqual({
      traceparent: `00-${execution.traceId}-${attempt.spanContext().spanId}-01`,
    });
  });

  it("continues the submitter's trace in a queued execution", async () => {
    // A queue of one, busy: the second submit waits in the queue and runs from its job row.
    const host = newHost({ queue: { concurrency: 1, pollIntervalMs: 10 } });
    registerSkill(host, { name: "slow" });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    host.executor.registerHandler("slow", () => gate);
    const submitter = trace.getTracer("test").startSpan("submitter");
    const [busy, queued] = await context.with(trace.setSpan(ROOT_CONTEXT, submitter), async () => [
      await host.executor.submit("slow", {}),
      await host.executor.submit("slow", {}),
    ]);
    submitter.end();
    expect((await host.executor.getExecution(queued!))?.status).toBe("queued");
    release();
    const [first, second] = await Promise.all([host.executor.wait(busy!), host.executor.wait(queued!)]);
    expect(second!.status).toBe("success");
    for (const execution of [first!, second!]) {
      const span = telemetry
        .spans()
        .find((candidate) => candidate.spanContext().spanId === execution.spanId)!;
      expect(span.parentSpanContext?.spanId).toBe(submitter.spanContext().spanId);
      expect(execution.traceId).toBe(submitter.spanContext().traceId);
    }
    // The one that waited in the queue is measured; the one that started at once is not.
    const waits = (await telemetry.collect()).filter(
      (point) =>
        point.name === "skillbox.execution.queue_wait" && point.attributes["gen_ai.tool.name"] === "slow",
    );
    expect((waits[0]?.value as { count: number } | undefined)?.count).toBe(1);
  });
});

describe("execution metrics", () => {
  // Skills no other test of the file runs: the counters are cumulative.
  it("counts executions by skill and status, with their duration", async () => {
    const host = newHost();
    registerSkill(host, { name: "counted" });
    registerSkill(host, { name: "failing" });
    host.executor.registerHandler("counted", (input) => input);
    host.executor.registerHandler("failing", () => {
      throw new Error("boom");
    });
    await host.executor.execute("counted", {});
    await host.executor.execute("counted", {});
    await host.executor.execute("failing", {});
    const points = await telemetry.collect();
    const count = (skill: string, status: string) =>
      points.find(
        (point) =>
          point.name === "skillbox.executions" &&
          point.attributes["gen_ai.tool.name"] === skill &&
          point.attributes["skillbox.status"] === status,
      )?.value;
    expect(count("counted", "success")).toBe(2);
    expect(count("failing", "error")).toBe(1);
    const broken = points.find(
      (point) => point.name === "skillbox.executions" && point.attributes["gen_ai.tool.name"] === "failing",
    );
    expect(broken?.attributes["skillbox.error.code"]).toBe("HANDLER_ERROR");
    const duration = points.find(
      (point) =>
        point.name === "skillbox.execution.duration" && point.attributes["gen_ai.tool.name"] === "counted",
    );
    expect(duration?.value).toMatchObject({ count: 2 });
    const active = points.find(
      (point) =>
        point.name === "skillbox.executions.active" && point.attributes["gen_ai.tool.name"] === "counted",
    );
    expect(active?.value).toBe(0);
  });
});

describe("execute_tool spans of executions that never run", () => {
  it("ends the span of an execution whose input throws when it is read", async () => {
    const host = newHost();
    registerSkill(host, { name: "echo" });
    host.executor.registerHandler("echo", (input) => input);
    const input = {
      get broken(): never {
        throw new Error("input getter failed");
      },
    };
    await expect(host.executor.execute("echo", input)).rejects.toThrow("input getter failed");
    expect(executionSpan("echo").attributes["skillbox.status"]).toBe("error");
  });

  it("ends the span of an execution whose running row cannot be written", async () => {
    const host = newHost();
    registerSkill(host, { name: "refused" });
    host.executor.registerHandler("refused", (input) => input);
    const database = new Database(host.databasePath);
    try {
      database.exec(`
        CREATE TRIGGER refuse_start BEFORE INSERT ON skill_executions
        WHEN NEW.skill_name = 'refused'
        BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;
      `);
    } finally {
      database.close();
    }
    await expect(host.executor.execute("refused", {})).rejects.toMatchObject({ code: "DATABASE_ERROR" });
    const span = executionSpan("refused");
    expect(span.attributes["skillbox.status"]).toBe("error");
    expect(span.attributes["skillbox.error.code"]).toBe("DATABASE_ERROR");
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    const counted = (await telemetry.collect()).filter(
      (point) => point.name === "skillbox.executions" && point.attributes["gen_ai.tool.name"] === "refused",
    );
    expect(counted.map((point) => point.attributes)).toEqual([
      { "gen_ai.tool.name": "refused", "skillbox.status": "error", "skillbox.error.code": "DATABASE_ERROR" },
    ]);
  });
});
