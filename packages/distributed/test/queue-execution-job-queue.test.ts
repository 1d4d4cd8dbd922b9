import { randomUUID } from "node:crypto";
import { createConsoleLogger } from "@skillbox/core";
import { ExecutionJobQueue } from "@skillbox/distributed";
import { freeLoopbackPort } from "@skillbox/test-helpers/free-loopback-port";
import { type RunningRedis, startRedisServer } from "@skillbox/test-helpers/redis-server";
import { type Job, Queue, Worker } from "bullmq";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

const quiet = createConsoleLogger({ level: "error" });
let redis: RunningRedis;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  await redis?.stop();
});

/** A job queue with a prefix of its own, so tests sharing the Redis never see each other's jobs. */
async function openQueue(): Promise<ExecutionJobQueue & { testPrefix: string }> {
  const prefix = `t-${randomUUID().slice(0, 8)}`;
  const queue = await ExecutionJobQueue.open({ url: redis.url, prefix });
  closers.push(() => queue.close());
  return Object.assign(queue, { testPrefix: prefix });
}

/** A plain BullMQ view of the same queue, to look at its jobs as BullMQ keeps them. */
function bullQueue(prefix: string, name = "default"): Queue {
  const queue = new Queue(name, { connection: { host: "127.0.0.1", port: redis.port }, prefix });
  closers.push(() => queue.close());
  return queue;
}

/** A plain BullMQ worker on the same queue, processing with `process`. */
function bullWorker(prefix: string, process: (job: Job) => Promise<unknown>): Worker {
  const worker = new Worker("default", process, {
    connection: { host: "127.0.0.1", port: redis.port, maxRetriesPerRequest: null },
    prefix,
  });
  worker.on("error", () => {});
  closers.push(() => worker.close());
  return worker;
}

function job(executionId: string, queue = "default") {
  return { executionId, queue, contentHash: "hash-1" };
}

describe("ExecutionJobQueue", () => {
  it("refuses to open against a Redis that evicts keys", async () => {
    const evicting = await startRedisServer({ maxmemoryPolicy: "volatile-lru" });
    closers.push(() => evicting.stop());
    await expect(ExecutionJobQueue.open({ url: evicting.url })).rejects.toMatchObject({
      code: "QUEUE_EVICTING",
    });
  });

  it("refuses to open when Redis does not answer, naming the address", async () => {
    const port = await freeLoopbackPort();
    await expect(
      ExecutionJobQueue.open({ url: `redis://127.0.0.1:${port}`, readyTimeoutMs: 300 }),
    ).rejects.toMatchObject({
      code: "QUEUE_UNAVAILABLE",
      message: expect.stringContaining(`127.0.0.1:${port}`),
    });
  });

  it("fails an add at once with QUEUE_UNAVAILABLE while Redis is away, rather than waiting for it", async () => {
    const port = await freeLoopbackPort();
    const queue = new ExecutionJobQueue({ url: `redis://127.0.0.1:${port}`, logger: quiet });
    closers.push(() => queue.close());
    await expect(queue.add([job(randomUUID())])).rejects.toMatchObject({ code: "QUEUE_UNAVAILABLE" });
    await expect(queue.depth("default")).rejects.toMatchObject({ code: "QUEUE_UNAVAILABLE" });
  });

  it("adds a job whose id is the execution id, carrying ids only", async () => {
    const queue = await openQueue();
    const id = randomUUID();
    await queue.add([job(id)]);
    const stored = await bullQueue(queue.testPrefix).getJob(id);
    expect(stored?.id).toBe(id);
    expect(stored?.data).toEqual({ executionId: id, contentHash: "hash-1" });
    expect(stored?.opts).toMatchObject({ attempts: 1, removeOnComplete: true, removeOnFail: true });
  });

  it("ignores an add of an execution whose job it still holds", async () => {
    const queue = await openQueue();
    const [first, second] = [randomUUID(), randomUUID()];
    await queue.add([job(first), job(second)]);
    await queue.add([job(first)]);
    await queue.add([job(first), job(second), job(first)]);
    expect(await queue.depth("default")).toEqual({ queue: "default", waiting: 2, active: 0, delayed: 0 });
  });

  it("takes the same execution again once its job completed or failed", async () => {
    const queue = await openQueue();
    const [completes, fails] = [randomUUID(), randomUUID()];
    const processed: string[] = [];
    const finished = new Set<string>();
    const worker = bullWorker(queue.testPrefix, async (taken) => {
      processed.push(taken.id ?? "");
      if (taken.id === fails) throw new Error("fails on purpose");
    });
    const settled = (id: string) =>
      new Promise<void>((resolve) => {
        const check = (done: Job | undefined) => {
          if (done?.id !== id) return;
          finished.add(id);
          resolve();
        };
        worker.on("completed", check);
        worker.on("failed", check);
      });
    let both = Promise.all([settled(completes), settled(fails)]);
    await queue.add([job(completes), job(fails)]);
    await both;
    const view = bullQueue(queue.testPrefix);
    await expect.poll(async () => (await view.getJob(completes)) ?? null).toBeNull();
    await expect.poll(async () => (await view.getJob(fails)) ?? null).toBeNull();

    both = Promise.all([settled(completes), settled(fails)]);
    await queue.add([job(completes), job(fails)]);
    await both;
    // Each ran twice: once per add, never retried by BullMQ (attempts 1).
    expect(processed.sort()).toEqual([completes, completes, fails, fails].sort());
  });

  it("counts waiting and active jobs per queue", async () => {
    const queue = await openQueue();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const started = new Promise<void>((resolve) => {
      bullWorker(queue.testPrefix, async () => {
        resolve();
        await held;
      });
    });
    await queue.add([job(randomUUID())]);
    await started;
    await queue.add([job(randomUUID()), job(randomUUID()), job(randomUUID(), "sandbox")]);
    // The worker takes one job at a time (concurrency 1): one active, the next two wait.
    expect(await queue.depth("default")).toEqual({ queue: "default", waiting: 2, active: 1, delayed: 0 });
    expect(await queue.depth("sandbox")).toEqual({ queue: "sandbox", waiting: 1, active: 0, delayed: 0 });
    release();
  });

  it("keeps queues of different prefixes apart, under the skillbox prefix by default", async () => {
    const queue = new ExecutionJobQueue({ url: redis.url });
    closers.push(() => queue.close());
    expect(queue.prefix).toBe("skillbox");
    const other = await openQueue();
    const id = randomUUID();
    await other.add([job(id)]);
    expect((await queue.depth("default")).waiting).toBe(0);
    expect((await other.depth("default")).waiting).toBe(1);
  });

  it.each(["Default", "", "a".repeat(65), "queue:name", "queue name"])(
    "refuses the queue name %j",
    async (name) => {
      const queue = await openQueue();
      await expect(queue.add([job(randomUUID(), name)])).rejects.toMatchObject({ code: "CONFIG_INVALID" });
      await expect(queue.depth(name)).rejects.toMatchObject({ code: "CONFIG_INVALID" });
    },
  );

  it("refuses a malformed prefix", () => {
    expect(() => new ExecutionJobQueue({ url: redis.url, prefix: "two words" })).toThrow(/queue prefix/);
  });

  it("tells the server's version and eviction policy", async () => {
    const queue = await openQueue();
    expect(await queue.serverInfo()).toEqual({
      version: expect.stringMatching(/^\d+\.\d+/),
      maxmemoryPolicy: "noeviction",
    });
  });

  it("adds again once a restarted Redis (its jobs gone) is back", async () => {
    const queue = await openQueue();
    await queue.add([job(randomUUID())]);
    await redis.restart();
    const id = randomUUID();
    // A producer fails fast while the connection is down; poll until it is back.
    await expect
      .poll(
        async () => {
          await queue.add([job(id)]).catch(() => {});
          return (await queue.depth("default").catch(() => ({ waiting: -1 }))).waiting;
        },
        { timeout: 15_000, interval: 100 },
      )
      .toBe(1);
  });
});
