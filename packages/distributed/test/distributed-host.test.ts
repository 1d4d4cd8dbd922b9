import { defineInterceptor, type ExecutionStreamEvent } from "@skillbox/core";
import type { DistributedHost } from "@skillbox/distributed";
import { describe, expect, it } from "vitest";
import { useDistributedHosts } from "./host-fixture.js";

const hosts = useDistributedHosts();

/** A host on `database` whose echo skill answers the message and the execution's id. */
function openHost(
  database: string,
  role: "api" | "worker" | "both",
  prefix: string,
): Promise<DistributedHost> {
  return hosts.openHost({
    database,
    role,
    prefix,
    echo: (input, ctx) => ({ echoed: input.msg, by: ctx.executionId }),
  });
}

describe("createDistributedHost", () => {
  it("runs an execution submitted on an API host on a worker host, and the API host gets the result", async () => {
    const database = hosts.database();
    const api = await openHost(database, "api", "p1");
    await openHost(database, "worker", "p1");
    const execution = await api.executor.execute("echo", { msg: "hi" });
    expect(execution.status).toBe("success");
    expect(execution.output).toEqual({ echoed: "hi", by: execution.id });
    expect((await api.executor.getExecution(execution.id))?.status).toBe("success");
  });

  it("pauses for an interceptor's approval on the worker, is approved on the API host, and resumes on a worker", async () => {
    const database = hosts.database();
    const api = await openHost(database, "api", "p2");
    const worker = await openHost(database, "worker", "p2");
    const befores: (string | null)[] = [];
    worker.executor.use(
      defineInterceptor({
        name: "second-pair-of-eyes",
        before(context) {
          befores.push(context.approval?.decision ?? null);
          context.requireApproval("echoes need a second pair of eyes");
        },
      }),
    );
    const paused = await api.executor.execute("echo", { msg: "careful" }, { apiKeyId: "alice" });
    expect(paused.status).toBe("awaiting_approval");
    expect(paused.approval).toMatchObject({ requestedBy: "interceptor:second-pair-of-eyes", decision: null });
    await expect(api.executor.approve(paused.id, { by: "bob", apiKeyId: "mallory" })).rejects.toMatchObject({
      code: "EXECUTION_NOT_FOUND",
    });
    const approved = await api.executor.approve(paused.id, { by: "bob", apiKeyId: "alice" });
    expect(approved.status).toBe("queued");
    const done = await api.executor.wait(paused.id, { apiKeyId: "alice" });
    expect(done).toMatchObject({ status: "success", output: { echoed: "careful", by: paused.id } });
    expect(done.approval).toMatchObject({ decision: "approved", decidedBy: "bob" });
    expect(befores).toEqual([null, "approved"]);
  });

  it("streams the events of an execution running on another host, and scopes every read to its owner", async () => {
    const database = hosts.database();
    const api = await openHost(database, "api", "p3");
    const worker = await openHost(database, "worker", "p3");
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    worker.registry.register({ name: "steps", version: "1.0.0", input: {}, handler: "steps" });
    api.registry.register({ name: "steps", version: "1.0.0", input: {}, handler: "steps" });
    worker.executor.registerHandler("steps", async (_input, ctx) => {
      ctx.progress({ progress: 1, total: 2, message: "half way" });
      await released;
      return "done";
    });
    const id = await api.executor.submit("steps", {}, { apiKeyId: "alice" });
    const seen: ExecutionStreamEvent["type"][] = [];
    let progressMessage: string | undefined;
    for await (const event of api.executor.events(id, { apiKeyId: "alice" })) {
      seen.push(event.type);
      // The handler waits until the report was seen: as a progress event, or on the record of a
      // status event when the report was stored before this stream read it.
      const report =
        event.type === "progress"
          ? event.progress
          : event.type === "status"
            ? event.execution.progress
            : null;
      if (report !== null) {
        progressMessage = report.message;
        release();
      }
    }
    expect(progressMessage).toBe("half way");
    expect(seen.at(-1)).toBe("finished");
    expect((await api.executor.getExecution(id))?.output).toBe("done");
    await expect(api.executor.wait(id, { apiKeyId: "mallory" })).rejects.toMatchObject({
      code: "EXECUTION_NOT_FOUND",
    });
    await expect(api.executor.cancel(id, { apiKeyId: "mallory" })).rejects.toMatchObject({
      code: "EXECUTION_NOT_FOUND",
    });
    expect(await api.executor.listExecutions({ owner: "mallory" })).toEqual([]);
    expect((await api.executor.listExecutions({ owner: "alice" })).map((execution) => execution.id)).toEqual([
      id,
    ]);
  });

  it("never starts a queued execution whose deadline passed while no worker took it", async () => {
    const database = hosts.database();
    const api = await openHost(database, "api", "p4");
    const id = await api.executor.submit("echo", { msg: "late" }, { totalTimeoutMs: 50 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await openHost(database, "worker", "p4");
    const ended = await api.executor.wait(id);
    expect(ended.status).toBe("timeout");
    expect(ended.error?.code).toBe("DEADLINE_EXCEEDED");
  });

  it("ends a queued execution past its deadline when no worker serves its queue (the sweeper), never leaving it queued", async () => {
    const database = hosts.database();
    const api = await openHost(database, "api", "p6");
    const id = await api.executor.submit("echo", { msg: "nobody takes it" }, { totalTimeoutMs: 50 });
    const ended = await api.executor.wait(id, { timeoutMs: 20_000 });
    expect(ended).toMatchObject({ status: "timeout", error: { code: "DEADLINE_EXCEEDED" } });
  });

  it("answers APPROVAL_EXPIRED to an approval after the deadline by the database clock, and grants nothing", async () => {
    const database = hosts.database();
    const api = await openHost(database, "api", "p7");
    const worker = await openHost(database, "worker", "p7");
    worker.executor.use(
      defineInterceptor({
        name: "second-pair-of-eyes",
        before: (context) => context.requireApproval("echoes need a second pair of eyes"),
      }),
    );
    const paused = await api.executor.execute("echo", { msg: "careful" }, { approvalTimeoutMs: 1 });
    expect(paused.status).toBe("awaiting_approval");
    const expiresAt = Date.parse(paused.approval?.expiresAt ?? "");
    await expect.poll(async () => (await api.store.now()) > expiresAt, { timeout: 15_000 }).toBe(true);
    await expect(api.executor.approve(paused.id, { by: "bob" })).rejects.toMatchObject({
      code: "APPROVAL_EXPIRED",
    });
    expect(await api.executor.getExecution(paused.id)).toMatchObject({
      status: "rejected",
      error: { code: "APPROVAL_EXPIRED" },
      approval: { decision: "expired" },
    });
  });

  it("answers one execution for one idempotency key submitted on two hosts at once", async () => {
    const database = hosts.database();
    const first = await openHost(database, "api", "p5");
    const second = await openHost(database, "api", "p5");
    await openHost(database, "worker", "p5");
    const options = { apiKeyId: "alice", idempotencyKey: "order-42" };
    const [a, b] = await Promise.all([
      first.executor.execute("echo", { msg: "once" }, options),
      second.executor.execute("echo", { msg: "once" }, options),
    ]);
    expect(a.id).toBe(b.id);
    expect(await first.executor.countExecutions({ owner: "alice" })).toBe(1);
    await expect(second.executor.submit("echo", { msg: "other" }, options)).rejects.toMatchObject({
      code: "IDEMPOTENCY_CONFLICT",
    });
  });
});
