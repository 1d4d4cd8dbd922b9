import { isSkillboxError } from "../errors/skillbox-error.js";
import type { ExecuteOptions, RetryPolicy, Skill } from "../types.js";

/** The policy used when neither the skill nor the call sets one: a single attempt. */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 1,
  initialDelayMs: 100,
  backoffCoefficient: 2,
  maxDelayMs: 5000,
  jitter: 0.2,
  nonRetryableCodes: [],
});

/** Merges defaults, the skill's policy and the call's overrides (the call wins). */
export function resolveRetryPolicy(skill: Skill, options: ExecuteOptions): RetryPolicy {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...skill.retry, ...options.retry };
  if (options.maxRetries !== undefined) policy.maxAttempts = Math.max(1, Math.trunc(options.maxRetries) + 1);
  return policy;
}

/** Delay before attempt `attempt + 1`, with exponential backoff, a cap and jitter. */
export function retryDelay(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const base = Math.min(
    policy.maxDelayMs,
    policy.initialDelayMs * policy.backoffCoefficient ** (attempt - 1),
  );
  const spread = base * policy.jitter * (random() * 2 - 1);
  return Math.max(0, Math.round(base + spread));
}

/** Whether a failed attempt may be retried under `policy`. */
export function isRetryable(error: unknown, policy: RetryPolicy): boolean {
  if (!isSkillboxError(error)) return true;
  return error.retryable && !policy.nonRetryableCodes.includes(error.code);
}
