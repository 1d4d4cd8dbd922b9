import { defineInterceptor, type ExecutionStreamEvent } from "@skillbox/core";
import { createDistributedHost, type DistributedHost } from "@skillbox/distributed";
import { type RunningPostgres, startPostgresCluster } from "@skillbox/test-helpers/postgres-cluster";
import { type RunningRedis, startRedisServer } from "@skillbox/test-helpers/redis-server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

let postgres: RunningPostgres;
let redis: RunningRedis;
let databases = 0;
const hosts: DistributedHost[] = [];

beforeAll(async () => {
  [postgres, redis] = await Promise.all([startPostgresCluster(), startRedisServer()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([postgres?.stop(), redis?.stop()]);
});

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close({ graceMs: 1000 });
});

async function openHost(
  database: string,
  role: "api" | "worker" | "both",
  prefix: string,
): Promise<DistributedHost> {
  const host = await createDistributedHost({
    database,
    queue: redis.url,
    role,
    prefix,
    logger: quietLogger(),
  });
  hosts.push(host);
  host.registry.register({
    name: "echo",
    version: "1.0.0",
    input: { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] },
    handler: "echo",
  });
  host.executor.registerHandler("echo", (input: { msg: string }, ctx) => ({
    echoed: input.msg,
    by: ctx.executionId,
  }));
  await host.startWorker();
  return host;
}

function quietLogger() {
  const nothing = () => {};
  return { debug: nothing, info: nothing, warn: nothing, error: nothing };
}

describe("createDistributedHost", () => {
  it("runs an execution submitted on an API host on a worker host, and the API host gets the result", async () => {
    const database = postgres.createDatabase(`host_${++databases}`);
    const api = await openHost(database, "api", "p1");
    await openHost(database, "worker", "p1");
    const execution = await api.executor.execute("echo", { msg: "hi" });
    expect(execution.status).toBe("success");
    expect(execution.output).toEqual({ echoed: "hi", by: execution.id });
    expect((await api.executor.getExecution(execution.id))?.status).toBe("success");
  });

  it("pauses for an interceptor's approval on the worker, is approved on the API host, and resumes on a worker", async () => {
    const database = postgres.createDatabase(`host_${++databases}`);
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
    const database = postgres.createDatabase(`host_${++databases}`);
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
      if (event.type === "progress") {
        progressMessage = event.progress.message;
        release();
      }
      if (event.type === "status" && event.status === "running") release();
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
    const database = postgres.createDatabase(`host_${++databases}`);
    const api = await openHost(database, "api", "p4");
    const id = await api.executor.submit("echo", { msg: "late" }, { totalTimeoutMs: 50 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await openHost(database, "worker", "p4");
    const ended = await api.executor.wait(id);
    expect(ended.status).toBe("timeout");
    expect(ended.error?.code).toBe("DEADLINE_EXCEEDED");
  });

  it("answers one execution for one idempotency key submitted on two hosts at once", async () => {
    const database = postgres.createDatabase(`host_${++databases}`);
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
