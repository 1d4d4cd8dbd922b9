import type { Skill } from "@skillbox/core";

/** The queue a skill's executions go to when it names none. */
export const DEFAULT_QUEUE = "default";

/**
 * The queue a skill's executions are dispatched to: its manifest's `queue` (for example
 * `sandbox` for container skills, so only hosts with a container engine take them), else
 * {@link DEFAULT_QUEUE}.
 */
export function skillQueueName(skill: Skill): string {
  return skill.queue ?? DEFAULT_QUEUE;
}
