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
});
