/** What a rate-limit answer asks for: how long to wait, and when the window resets (if GitHub said). */
export interface RateLimitAnswer {
  /** Milliseconds until GitHub accepts requests again. */
  waitMs: number;
  /** ISO time the limit resets (from `X-RateLimit-Reset`, or now + `Retry-After`). */
  resetAt: string;
}

/** GitHub's advice for a secondary rate limit that names no time: wait at least a minute. */
const SECONDARY_LIMIT_WAIT_MS = 60_000;

function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const seconds = Number(value.trim());
  if (Number.isFinite(seconds) && value.trim() !== "") return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function resetMs(headers: Headers): number | undefined {
  if (headers.get("x-ratelimit-remaining")?.trim() !== "0") return undefined;
  const reset = Number(headers.get("x-ratelimit-reset"));
  return Number.isFinite(reset) && reset > 0 ? reset * 1000 : undefined;
}

/**
 * Recognises GitHub's rate-limit answers: a 429, or a 403 that carries `Retry-After`,
 * `X-RateLimit-Remaining: 0` or a "rate limit" message (secondary limits). Anything else is
 * `undefined`, so a plain 403 (no access) stays an access error.
 */
export function rateLimitOf(
  status: number,
  headers: Headers,
  githubMessage: string | undefined,
  now: number = Date.now(),
): RateLimitAnswer | undefined {
  if (status !== 403 && status !== 429) return undefined;
  const afterMs = retryAfterMs(headers.get("retry-after"), now);
  if (afterMs !== undefined) return { waitMs: afterMs, resetAt: new Date(now + afterMs).toISOString() };
  const resetAt = resetMs(headers);
  if (resetAt !== undefined) {
    return { waitMs: Math.max(0, resetAt - now), resetAt: new Date(resetAt).toISOString() };
  }
  if (status === 429 || /rate limit/i.test(githubMessage ?? "")) {
    return {
      waitMs: SECONDARY_LIMIT_WAIT_MS,
      resetAt: new Date(now + SECONDARY_LIMIT_WAIT_MS).toISOString(),
    };
  }
  return undefined;
}
