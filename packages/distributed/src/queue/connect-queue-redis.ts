import { redactedUrl, SkillboxError } from "@skillbox/core";
import { Redis, type RedisOptions } from "ioredis";

/**
 * Who a queue connection is for. A `producer` (a host adding jobs) fails a command fast while
 * Redis is away: the execution is already durable in the record, and the sweeper adds its job
 * again, so waiting would only hold the caller. A `worker` waits through reconnects instead
 * (BullMQ requires `maxRetriesPerRequest: null` on the connections its workers block on).
 */
export type QueueRedisRole = "producer" | "worker";

/** Options of {@link connectQueueRedis}. */
export interface QueueRedisConnectOptions {
  role: QueueRedisRole;
}

/** ioredis options as {@link queueRedisOptions} makes them: always with a reconnect delay (BullMQ's options type wants one that is never null). */
export type QueueRedisOptions = Omit<RedisOptions, "retryStrategy"> & {
  retryStrategy(times: number): number;
};

const EXPECTED_FORM = "redis://[user:password@]host[:port][/db] (or rediss:// for TLS)";

/** Reconnects quickly at first (a restarted Redis is back in well under a second), then backs off to 2 s. */
function reconnectDelay(times: number): number {
  return Math.min(50 * times, 2000);
}

/** `url` undefined: the URL did not parse, so it is not echoed (it cannot be redacted reliably). */
function invalid(url: string | undefined, problem: string): SkillboxError {
  return new SkillboxError(
    "CONFIG_INVALID",
    `SKILLBOX_QUEUE must be a URL of the form ${EXPECTED_FORM}; ${problem}${url === undefined ? "" : `, got "${redactedUrl(url)}"`}`,
  );
}

/**
 * The ioredis options for a queue connection to `url` (`SKILLBOX_QUEUE`), checked: a malformed
 * URL is a `CONFIG_INVALID` error naming `SKILLBOX_QUEUE` and the form it expects, never a
 * connection that retries an impossible address forever.
 */
export function queueRedisOptions(url: string, options: QueueRedisConnectOptions): QueueRedisOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(undefined, "it is not a URL (escape / @ ? # in the password as %2F %40 %3F %23)");
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    throw invalid(url, `the scheme must be redis: or rediss:, not ${parsed.protocol}`);
  }
  if (parsed.hostname === "") throw invalid(url, "it names no host");
  const port = parsed.port === "" ? 6379 : Number(parsed.port);
  const dbPath = parsed.pathname.replace(/^\//, "");
  if (dbPath !== "" && !/^\d{1,2}$/.test(dbPath)) {
    throw invalid(url, "the path must be a database number such as /0");
  }
  const redisOptions: QueueRedisOptions = {
    // URL brackets an IPv6 host; ioredis wants it bare.
    host: parsed.hostname.replace(/^\[(.*)\]$/, "$1"),
    port,
    db: dbPath === "" ? 0 : Number(dbPath),
    retryStrategy: reconnectDelay,
    connectionName: `skillbox-${options.role}`,
  };
  if (parsed.username !== "") redisOptions.username = decodeURIComponent(parsed.username);
  if (parsed.password !== "") redisOptions.password = decodeURIComponent(parsed.password);
  if (parsed.protocol === "rediss:") redisOptions.tls = { servername: redisOptions.host };
  if (options.role === "worker") {
    redisOptions.maxRetriesPerRequest = null;
  } else {
    redisOptions.maxRetriesPerRequest = 1;
    redisOptions.enableOfflineQueue = false;
  }
  return redisOptions;
}

/**
 * Connects to the queue's Redis at `url` with the options its role needs
 * ({@link queueRedisOptions}). The caller owns the connection and quits it.
 */
export function connectQueueRedis(url: string, options: QueueRedisConnectOptions): Redis {
  return new Redis(queueRedisOptions(url, options));
}

/** How long {@link waitForQueueRedis} waits for a first connection unless told otherwise. */
const DEFAULT_READY_TIMEOUT_MS = 10_000;

/**
 * Resolves once `redis` is connected and ready. A producer connection fails commands sent before
 * that (no offline queue), so a check run at start must wait for it first. Rejects with
 * `QUEUE_UNAVAILABLE` (naming the last connection error) when it is not ready within `timeoutMs`.
 */
export async function waitForQueueRedis(
  redis: Redis,
  timeoutMs: number = DEFAULT_READY_TIMEOUT_MS,
): Promise<void> {
  if (redis.status === "ready") return;
  if (redis.status === "wait") void redis.connect().catch(() => {});
  let lastError: Error | undefined;
  let cleanup = (): void => {};
  try {
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => {
        lastError = error;
      };
      const onEnd = () => reject(unavailable(redis, lastError));
      const timer = setTimeout(() => reject(unavailable(redis, lastError)), timeoutMs);
      timer.unref();
      redis.once("ready", resolve);
      redis.on("error", onError);
      redis.once("end", onEnd);
      cleanup = () => {
        clearTimeout(timer);
        redis.off("ready", resolve);
        redis.off("error", onError);
        redis.off("end", onEnd);
      };
    });
  } finally {
    cleanup();
  }
}

function unavailable(redis: Redis, cause: Error | undefined): SkillboxError {
  const { host, port } = redis.options;
  return new SkillboxError(
    "QUEUE_UNAVAILABLE",
    `The queue's Redis at ${host}:${port} (SKILLBOX_QUEUE) did not answer${cause === undefined ? "" : `: ${cause.message}`}; start it, or fix the URL`,
    { cause },
  );
}
