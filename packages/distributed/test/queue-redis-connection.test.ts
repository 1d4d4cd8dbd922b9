import { assertRedisNoEviction, connectQueueRedis, queueRedisOptions } from "@skillbox/distributed";
import { type RunningRedis, startRedisServer } from "@skillbox/test-helpers/redis-server";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

describe("queueRedisOptions", () => {
  it("gives workers maxRetriesPerRequest: null and producers fast failures", () => {
    const worker = queueRedisOptions("redis://127.0.0.1:6390/2", { role: "worker" });
    expect(worker).toMatchObject({ host: "127.0.0.1", port: 6390, db: 2, maxRetriesPerRequest: null });
    const producer = queueRedisOptions("redis://127.0.0.1", { role: "producer" });
    expect(producer).toMatchObject({ port: 6379, db: 0, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  });

  it("reads credentials, IPv6 hosts and rediss:// (TLS)", () => {
    const options = queueRedisOptions("rediss://user:p%40ss@[::1]:7000", { role: "worker" });
    expect(options).toMatchObject({ host: "::1", port: 7000, username: "user", password: "p@ss" });
    expect(options.tls).toEqual({ servername: "::1" });
  });

  it.each([
    ["not a url", "it is not a URL"],
    ["http://127.0.0.1:6379", "scheme"],
    ["redis://127.0.0.1:6379/queue", "database number"],
  ])("refuses %s with CONFIG_INVALID naming SKILLBOX_QUEUE and the expected form", (url, problem) => {
    let thrown: unknown;
    try {
      queueRedisOptions(url, { role: "producer" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: "CONFIG_INVALID" });
    const message = (thrown as Error).message;
    expect(message).toContain("SKILLBOX_QUEUE");
    expect(message).toContain("redis://[user:password@]host[:port][/db]");
    expect(message).toContain(problem);
  });

  it("keeps a password out of the message", () => {
    expect(() => queueRedisOptions("redis://admin:hunter2@127.0.0.1/x", { role: "worker" })).toThrow(
      /redis:\/\/admin:\*\*\*@127\.0\.0\.1\/x/,
    );
    expect(() => queueRedisOptions("redis://admin:hunter2@127.0.0.1/x", { role: "worker" })).not.toThrow(
      /hunter2/,
    );
  });
});

describe("assertRedisNoEviction", () => {
  let noEviction: RunningRedis;
  let evicting: RunningRedis;
  const connections: Redis[] = [];

  function connect(url: string): Redis {
    const redis = connectQueueRedis(url, { role: "worker" });
    connections.push(redis);
    return redis;
  }

  beforeAll(async () => {
    [noEviction, evicting] = await Promise.all([
      startRedisServer(),
      startRedisServer({ maxmemoryPolicy: "allkeys-lru" }),
    ]);
  });
  afterEach(async () => {
    await Promise.all(connections.splice(0).map((redis) => redis.quit()));
  });
  afterAll(async () => {
    await Promise.all([noEviction?.stop(), evicting?.stop()]);
  });

  it("accepts noeviction", async () => {
    await expect(assertRedisNoEviction(connect(noEviction.url))).resolves.toBe("noeviction");
  });

  it("refuses allkeys-lru with QUEUE_EVICTING naming the policy and the fix", async () => {
    const refusal = assertRedisNoEviction(connect(evicting.url));
    await expect(refusal).rejects.toMatchObject({ code: "QUEUE_EVICTING", data: { policy: "allkeys-lru" } });
    await expect(refusal).rejects.toThrow(/allkeys-lru.*maxmemory-policy noeviction/);
  });

  it("reads INFO memory when CONFIG is not allowed", async () => {
    const admin = connect(evicting.url);
    await admin.call("ACL", "SETUSER", "no-config", "on", ">secret", "~*", "&*", "+@all", "-config");
    const limited = connect(`redis://no-config:secret@127.0.0.1:${evicting.port}`);
    await expect(limited.config("GET", "maxmemory-policy")).rejects.toThrow(/NOPERM/);
    await expect(assertRedisNoEviction(limited)).rejects.toMatchObject({ code: "QUEUE_EVICTING" });
  });

  it("refuses a server that tells its policy neither through CONFIG nor INFO (fails closed)", async () => {
    const admin = connect(evicting.url);
    await admin.call("ACL", "SETUSER", "blind", "on", ">secret", "~*", "&*", "+@all", "-config", "-info");
    const blind = connect(`redis://blind:secret@127.0.0.1:${evicting.port}`);
    await expect(blind.info("memory")).rejects.toThrow(/NOPERM/);
    await expect(assertRedisNoEviction(blind)).rejects.toMatchObject({ code: "QUEUE_EVICTING" });
  });
});
