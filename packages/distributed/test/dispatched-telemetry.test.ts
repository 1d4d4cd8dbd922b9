import { setTimeout as delay } from "node:timers/promises";
// The workspace root's dependency: the test opens the submitter's span itself.
import { context, trace } from "@opentelemetry/api";
import { type MetricPoint, useRecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { describe, expect, it } from "vitest";
import { useDistributedHosts } from "./host-fixture.js";

const hosts = useDistributedHosts();
const QUEUE_WAIT = "skillbox.execution.queue_wait";
/** How long the test keeps the execution in the queue before any worker exists: the wait measured. */
const HELD_MS = 400;

/** The queue-wait histogram points of `skill` among `points`. */
function queueWaitOf(points: MetricPoint[], skill: string): { count: number; sum: number }[] {
  return points
    .filter((point) => point.name === QUEUE_WAIT && point.attributes["gen_ai.tool.name"] === skill)
    .map((point) => point.value as { count: number; sum: number });
}

describe("a dispatched execution's telemetry", () => {
  const telemetry = useRecordingTelemetry();

  it("records the queue wait from the submit to the start on the worker, in the submitter's trace", async () => {
    const database = hosts.database();
    const echo = (input: { msg: string }) => ({ echoed: input.msg });
    const api = await hosts.openHost({ database, role: "api", prefix: "telemetry", echo });

    const submitter = trace.getTracer("dispatched-telemetry-test").startSpan("submitter");
    const id = await context.with(trace.setSpan(context.active(), submitter), () =>
      api.executor.submit("echo", { msg: "queued" }, { apiKeyId: "alice" }),
    );
    submitter.end();
    const submittedAt = Date.now();
    // No worker yet: the execution waits in the queue, and the API host records no wait of its own.
    expect((await api.executor.getExecution(id))?.status).toBe("queued");
    expect(queueWaitOf(await telemetry.collect(), "echo")).toEqual([]);
    // Not a wait for an event: the time held in the queue is what the metric must cover.
    await delay(HELD_MS);
    const heldMs = Date.now() - submittedAt;

    await hosts.openHost({ database, role: "worker", prefix: "telemetry", echo });
    const done = await api.executor.wait(id, { apiKeyId: "alice" });
    expect(done).toMatchObject({ status: "success", output: { echoed: "queued" } });

    const [wait, ...others] = queueWaitOf(await telemetry.collect(), "echo");
    expect(others).toEqual([]);
    expect(wait?.count).toBe(1);
    expect(wait?.sum).toBeGreaterThanOrEqual(heldMs / 1000);

    const execution = telemetry.only("execute_tool echo");
    expect(execution.spanContext().traceId).toBe(submitter.spanContext().traceId);
    expect(execution.parentSpanContext?.spanId).toBe(submitter.spanContext().spanId);
    expect(done.traceId).toBe(submitter.spanContext().traceId);
    expect(done.spanId).toBe(execution.spanContext().spanId);
  });
});
