import { SkillboxError } from "@skillbox/core/handler";
import type { RateLimitAnswer } from "./rate-limit.js";

const TOKEN_VARIABLES = "SKILLBOX_GITHUB_TOKEN (or GITHUB_TOKEN)";

/** What an error message needs to know about the failed request. */
export interface FailedRequest {
  url: string;
  /** What the request was about, e.g. `repository octo/demo`, for "not found" messages. */
  subject: string;
  hasToken: boolean;
  /** Longest wait the settings allow, for the rate-limit advice. */
  rateLimitMaxWaitMs: number;
}

/**
 * Removes the token from text that came from the server: a misbehaving proxy or server could echo
 * the `Authorization` header back, and that text would otherwise land in an error and the audit trail.
 */
export function withoutSecret(text: string, secret: string | undefined): string {
  return secret === undefined || secret === "" ? text : text.split(secret).join("[token]");
}

/** The `message` of a GitHub error body (`{ "message": "Not Found", … }`), if it has one. */
export function githubMessageOf(bodyText: string): string | undefined {
  try {
    const body = JSON.parse(bodyText) as { message?: unknown };
    return typeof body?.message === "string" ? body.message.slice(0, 500) : undefined;
  } catch {
    return undefined;
  }
}

function advice(status: number, request: FailedRequest): string {
  if (status === 401) {
    return request.hasToken
      ? `GitHub rejected the token: check ${TOKEN_VARIABLES}, it may be mistyped, expired or revoked`
      : `GitHub requires authentication here: set ${TOKEN_VARIABLES}`;
  }
  if (status === 403) {
    return request.hasToken
      ? "the token lacks a permission (or SSO authorization) this request needs"
      : `access denied: set ${TOKEN_VARIABLES} to a token that may read it`;
  }
  if (status === 404) {
    return request.hasToken
      ? `${request.subject} not found, or the token lacks access to it`
      : `${request.subject} not found (a private one needs ${TOKEN_VARIABLES})`;
  }
  if (status === 409)
    return `${request.subject} is in a state GitHub cannot answer for (an empty repository?)`;
  if (status === 422) return "GitHub rejected a parameter of the request; check the input";
  if (status >= 500) return "GitHub failed to answer; try again later";
  return "unexpected answer from GitHub";
}

/** The `UPSTREAM_ERROR` for a non-success HTTP status; only 5xx is retryable. */
export function statusError(
  status: number,
  githubMessage: string | undefined,
  request: FailedRequest,
): SkillboxError {
  const said = githubMessage === undefined ? "" : `: ${githubMessage}`;
  return new SkillboxError(
    "UPSTREAM_ERROR",
    `${advice(status, request)} (GitHub answered ${status}${said} for GET ${request.url})`,
    {
      retryable: status >= 500,
      data: { status, url: request.url, ...(githubMessage === undefined ? {} : { githubMessage }) },
    },
  );
}

/** The `RATE_LIMITED` error for a limit the settings do not allow waiting out. */
export function rateLimitedError(
  answer: RateLimitAnswer,
  request: FailedRequest,
  reason: string,
): SkillboxError {
  const seconds = Math.ceil(answer.waitMs / 1000);
  const fix = request.hasToken
    ? `raise SKILLBOX_GITHUB_RATE_LIMIT_MAX_WAIT_MS (now ${request.rateLimitMaxWaitMs}) to wait for it, or try later`
    : `set ${TOKEN_VARIABLES} for a much higher limit, or raise SKILLBOX_GITHUB_RATE_LIMIT_MAX_WAIT_MS (now ${request.rateLimitMaxWaitMs}) to wait for it`;
  return new SkillboxError(
    "RATE_LIMITED",
    `GitHub rate limit reached for GET ${request.url}; it resets at ${answer.resetAt} (in ${seconds} s), ${reason}: ${fix}`,
    { retryable: false, data: { retryAfterMs: answer.waitMs, resetAt: answer.resetAt, url: request.url } },
  );
}

/** The retryable `UPSTREAM_ERROR` for a request that got no HTTP answer at all. */
export function unreachableError(url: string, cause: unknown): SkillboxError {
  const origin = new URL(url).origin;
  const detail =
    cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : "";
  return new SkillboxError(
    "UPSTREAM_ERROR",
    `could not reach GitHub at ${origin}${detail === "" ? "" : ` (${detail})`}; check SKILLBOX_GITHUB_API_URL and the network`,
    { retryable: true, data: { url }, cause },
  );
}
