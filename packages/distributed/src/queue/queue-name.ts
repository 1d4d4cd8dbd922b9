import { SkillboxError } from "@skillbox/core";

/** The Redis key prefix of Skillbox's queues unless configured: apart from other BullMQ users' `bull`. */
export const DEFAULT_QUEUE_PREFIX = "skillbox";

const QUEUE_NAME = /^[a-z0-9-]{1,64}$/;
// No whitespace; braces allowed so a prefix can be a Redis Cluster hash tag (`{skillbox}`).
const QUEUE_PREFIX = /^[A-Za-z0-9_.{}:-]{1,64}$/;

/**
 * Checks a queue name as skills name them (`default`, `sandbox`): lowercase letters, digits and
 * dashes, 1 to 64 of them. Redis keys are built from it, so nothing else may pass (BullMQ itself
 * refuses only `:`).
 */
export function checkQueueName(name: string): string {
  if (typeof name !== "string" || !QUEUE_NAME.test(name)) {
    throw new SkillboxError(
      "CONFIG_INVALID",
      `A queue name must be 1 to 64 lowercase letters, digits or dashes ([a-z0-9-]), got ${JSON.stringify(name)}`,
    );
  }
  return name;
}

/** Checks a queue key prefix (1 to 64 letters, digits, `_ . { } : -`). */
export function checkQueuePrefix(prefix: string): string {
  if (typeof prefix !== "string" || !QUEUE_PREFIX.test(prefix)) {
    throw new SkillboxError(
      "CONFIG_INVALID",
      `A queue prefix must be 1 to 64 letters, digits or _.{}:- characters, got ${JSON.stringify(prefix)}`,
    );
  }
  return prefix;
}
