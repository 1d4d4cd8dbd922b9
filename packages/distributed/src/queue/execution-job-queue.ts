import { createConsoleLogger, SkillboxError, type SkillLogger } from "@skillbox/core";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { assertRedisNoEviction, readMaxmemoryPolicy } from "./assert-redis-no-eviction.js";
import { connectQueueRedis, waitForQueueRedis } from "./connect-queue-redis.js";
import { EXECUTION_JOB_NAME, type ExecutionJob, type ExecutionJobData } from "./execution-job.js";
import { checkQueueName, checkQueuePrefix, DEFAULT_QUEUE_PREFIX } from "./queue-name.js";

/** Options of {@link ExecutionJobQueue}. */
export interface ExecutionJobQueueOptions {
  /** The queue's Redis (`SKILLBOX_QUEUE`, `redis://…`). */
  url: string;
  /** Prefix of every Redis key (default `skillbox`); hosts and workers of one deployment share it. */
  prefix?: string;
  logger?: SkillLogger;
  /** How long {@link ExecutionJobQueue.open} waits for Redis to answer, in ms (default 10 000). */
  readyTimeoutMs?: number;
}

/** Jobs of a queue not yet finished, by BullMQ state. */
export interface ExecutionQueueDepth {
  queue: string;
  /** Not started: waiting (also while the queue is paused) or prioritized. */
  waiting: number;
  /** Taken by a worker. */
  active: number;
  delayed: number;
}

/**
 * The producer side of dispatch: adds executions' jobs to their BullMQ queues, with the
 * execution id as the job id. BullMQ ignores an add of a job id it still holds (waiting, active
 * or delayed), so adding the same execution again is harmless: that is how the sweeper heals a
 * job lost between the record's commit and the add, or with a restarted Redis. Finished jobs are
 * removed at once (`removeOnComplete`, `removeOnFail`), so the id can be added again later — after
 * an approval, or a requeue after a lost lease. BullMQ never retries (`attempts: 1`): the record,
 * not the queue, owns attempts and outcomes.
 */
export class ExecutionJobQueue {
  /**
   * Resolves once connected, refusing a Redis whose `maxmemory-policy` evicts (`QUEUE_EVICTING`)
   * or that does not answer in time (`QUEUE_UNAVAILABLE`).
   */
  static async open(options: ExecutionJobQueueOptions): Promise<ExecutionJobQueue> {
    const queue = new ExecutionJobQueue(options);
    try {
      await assertRedisNoEviction(queue.redis, { readyTimeoutMs: options.readyTimeoutMs });
    } catch (error) {
      await queue.close();
      throw error;
    }
    return queue;
  }

  readonly prefix: string;
  private readonly redis: Redis;
  private readonly logger: SkillLogger;
  /** One BullMQ queue per name, sharing the one connection; names are checked, so the map stays small. */
  private readonly queues = new Map<string, Queue<ExecutionJobData>>();
  private closed = false;

  constructor(options: ExecutionJobQueueOptions) {
    this.prefix = checkQueuePrefix(options.prefix ?? DEFAULT_QUEUE_PREFIX);
    this.logger = options.logger ?? createConsoleLogger();
    this.redis = connectQueueRedis(options.url, { role: "producer" });
    // ioredis reports every failed reconnect; one line while Redis is away is enough.
    let reported = false;
    this.redis.on("error", (error: Error) => {
      if (reported) return;
      reported = true;
      this.logger.warn(
        "the queue's Redis is unreachable; adds fail until it is back (the sweeper adds them again)",
        {
          error: error.message,
        },
      );
    });
    this.redis.on("ready", () => {
      reported = false;
    });
  }

  /**
   * Adds the jobs, one `addBulk` per queue. Rejects at once when Redis cannot take them
   * (`QUEUE_UNAVAILABLE` while disconnected); the records stay `queued`, and the sweeper adds
   * them again.
   */
  async add(jobs: readonly ExecutionJob[]): Promise<void> {
    this.checkConnected("the executions stay queued and the sweeper adds their jobs again");
    const byQueue = new Map<string, ExecutionJob[]>();
    for (const job of jobs) {
      const name = checkQueueName(job.queue);
      const list = byQueue.get(name);
      if (list === undefined) byQueue.set(name, [job]);
      else list.push(job);
    }
    await Promise.all(
      [...byQueue].map(([name, list]) =>
        this.queue(name).addBulk(
          list.map((job) => ({
            name: EXECUTION_JOB_NAME,
            data: { executionId: job.executionId, contentHash: job.contentHash },
            opts: { jobId: job.executionId, attempts: 1, removeOnComplete: true, removeOnFail: true },
          })),
        ),
      ),
    );
  }

  /** How many jobs of `queue` wait, run and are delayed (`skillbox doctor`, queue-wait metrics). */
  async depth(queue: string): Promise<ExecutionQueueDepth> {
    this.checkConnected("try again once it is back");
    const counts = await this.queue(checkQueueName(queue)).getJobCounts(
      "waiting",
      "prioritized",
      "active",
      "delayed",
    );
    return {
      queue,
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      active: counts.active ?? 0,
      delayed: counts.delayed ?? 0,
    };
  }

  /** The Redis server's version and `maxmemory-policy` (`skillbox doctor`); rejects when it does not answer. */
  async serverInfo(): Promise<{ version: string; maxmemoryPolicy: string }> {
    await waitForQueueRedis(this.redis);
    const info = await this.redis.info("server");
    const version = /^redis_version:(.*)$/m.exec(info)?.[1]?.trim() ?? "unknown";
    return { version, maxmemoryPolicy: (await readMaxmemoryPolicy(this.redis)) ?? "unknown" };
  }

  /** Closes the queues and the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.queues.values()].map((queue) => queue.close()));
    this.queues.clear();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** BullMQ would wait for a connection that is down; a submit must not hang on it. */
  private checkConnected(consequence: string): void {
    if (this.redis.status === "ready") return;
    throw new SkillboxError(
      "QUEUE_UNAVAILABLE",
      `The queue's Redis is not connected (${this.redis.status}); ${consequence}`,
    );
  }

  private queue(name: string): Queue<ExecutionJobData> {
    if (this.closed) throw new SkillboxError("BUSY", "The execution job queue is closed");
    let queue = this.queues.get(name);
    if (queue === undefined) {
      queue = new Queue<ExecutionJobData>(name, { connection: this.redis, prefix: this.prefix });
      queue.on("error", (error) =>
        this.logger.warn("a queue reported an error", { queue: name, error: error.message }),
      );
      this.queues.set(name, queue);
    }
    return queue;
  }
}
