import { assertRedisNoEviction, connectQueueRedis, ExecutionJobQueue } from "@skillbox/distributed";
import { type RunningRedis, startRedisServer } from "@skillbox/test-helpers/redis-server";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

describe("the eviction check when the policy cannot be read", () => {
  let redis: RunningRedis;
  const connections: Redis[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    const admin = connectQueueRedis(redis.url, { role: "worker" });
    connections.push(admin);
    // A user that may run the queue's commands but neither CONFIG nor INFO (as on some managed services).
    await admin.call("ACL", "SETUSER", "blind", "on", ">secret", "~*", "&*", "+@all", "-config", "-info");
  });
  afterEach(async () => {
    await Promise.all(connections.splice(0).map((connection) => connection.quit()));
  });
  afterAll(async () => {
    await redis?.stop();
  });

  const blindUrl = () => `redis://blind:secret@127.0.0.1:${redis.port}`;

  it("refuses (QUEUE_EVICTING) and says how to let the policy be read", async () => {
    const blind = connectQueueRedis(blindUrl(), { role: "worker" });
    connections.push(blind);
    const refusal = assertRedisNoEviction(blind);
    await expect(refusal).rejects.toMatchObject({ code: "QUEUE_EVICTING", data: { policy: null } });
    await expect(refusal).rejects.toThrow(/does not tell its maxmemory-policy.*ACL SETUSER blind \+info/);
    await expect(refusal).rejects.not.toThrow(/secret/);
  });

  it("so a job queue does not open on it", async () => {
    await expect(ExecutionJobQueue.open({ url: blindUrl(), prefix: "fail-closed" })).rejects.toMatchObject({
      code: "QUEUE_EVICTING",
    });
  });
});
