import { SkillboxError } from "@skillbox/core";
import type { Redis } from "ioredis";
import { waitForQueueRedis } from "./connect-queue-redis.js";

/** The one `maxmemory-policy` under which Redis never drops a key: any other may drop jobs and locks. */
const NO_EVICTION = "noeviction";

/** `CONFIG GET` answers a flat [name, value] list (RESP2) or a map (RESP3). */
function configValue(reply: unknown, name: string): string | undefined {
  if (Array.isArray(reply)) {
    const at = reply.indexOf(name);
    return at >= 0 && typeof reply[at + 1] === "string" ? (reply[at + 1] as string) : undefined;
  }
  if (reply !== null && typeof reply === "object") {
    const value = (reply as Record<string, unknown>)[name];
    return typeof value === "string" ? value : undefined;
  }
  return undefined;
}

/** An error Redis answered (unknown command, NOPERM), as opposed to a connection that failed. */
function isReplyError(error: unknown): boolean {
  return error instanceof Error && error.name === "ReplyError";
}

function infoValue(info: string, field: string): string | undefined {
  const line = info.split(/\r?\n/).find((candidate) => candidate.startsWith(`${field}:`));
  return line?.slice(field.length + 1).trim();
}

/**
 * Reads the Redis `maxmemory-policy`: `CONFIG GET` first, then `INFO memory` where `CONFIG` is
 * disabled or not allowed (managed services and ACL users commonly lack it). Undefined when
 * neither tells; rejects when the connection fails (wait for it first: {@link waitForQueueRedis}).
 */
export async function readMaxmemoryPolicy(redis: Redis): Promise<string | undefined> {
  try {
    const policy = configValue(await redis.config("GET", "maxmemory-policy"), "maxmemory-policy");
    if (policy !== undefined) return policy;
  } catch (error) {
    // Renamed, disabled or forbidden by an ACL: INFO usually still answers. A connection that
    // failed is no answer at all: it must not pass as "policy unknown".
    if (!isReplyError(error)) throw error;
  }
  try {
    return infoValue(await redis.info("memory"), "maxmemory_policy");
  } catch (error) {
    if (!isReplyError(error)) throw error;
    return undefined;
  }
}

/**
 * Refuses a Redis that may evict keys (waiting for the connection first): BullMQ keeps jobs and their locks as keys, and an
 * evicting policy drops them under memory pressure, losing queued work silently. Throws
 * `QUEUE_EVICTING` naming the policy found and the fix, and also when the server tells its
 * policy neither through `CONFIG GET` nor `INFO` (fails closed: an unread policy may evict).
 * Resolves with the policy, `noeviction`.
 */
export async function assertRedisNoEviction(
  redis: Redis,
  options: { readyTimeoutMs?: number } = {},
): Promise<string> {
  await waitForQueueRedis(redis, options.readyTimeoutMs);
  const policy = await readMaxmemoryPolicy(redis);
  if (policy === undefined) {
    const user = redis.options.username ?? "default";
    throw new SkillboxError(
      "QUEUE_EVICTING",
      `The queue's Redis does not tell its maxmemory-policy (CONFIG GET and INFO are both refused), so it may evict keys and lose jobs; allow the queue's user to read it (ACL SETUSER ${user} +info, or +config|get), and set \`maxmemory-policy noeviction\``,
      { data: { policy: null }, retryable: false },
    );
  }
  if (policy !== NO_EVICTION) {
    throw new SkillboxError(
      "QUEUE_EVICTING",
      `The queue's Redis has maxmemory-policy ${policy}, which evicts keys and so loses jobs; set \`maxmemory-policy noeviction\` (redis.conf, or CONFIG SET maxmemory-policy noeviction)`,
      { data: { policy }, retryable: false },
    );
  }
  return policy;
}
