import { type AddressPolicy, SkillboxError } from "@skillbox/core/handler";
import { fetch, type Response } from "undici";
import type { GuardedAgent } from "./guarded-agent.js";
import { HTTP_REQUEST_ENVIRONMENT } from "./http-request-settings.js";
import { withoutCredentials } from "./request-headers.js";
import { addressRefused, assertUrlAllowed } from "./url-guard.js";

/** One request as it is sent; redirects produce the next one. */
export interface PlannedRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** What sending needs besides the request. */
export interface SendOptions {
  policy: AddressPolicy;
  guarded: GuardedAgent;
  signal: AbortSignal;
  allowedMethods: readonly string[];
  maxRedirects: number;
  followRedirects: boolean;
}

/** The final response and how it was reached. */
export interface SentRequest {
  response: Response;
  request: PlannedRequest;
  redirects: string[];
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

function assertMethodAllowed(method: string, allowedMethods: readonly string[]): void {
  if (allowedMethods.includes(method)) return;
  throw new SkillboxError(
    "REQUEST_REFUSED",
    `http-request: method ${method} is not allowed (allowed: ${allowedMethods.join(", ")}); ` +
      `add it to ${HTTP_REQUEST_ENVIRONMENT.allowedMethods} to allow it`,
    { data: { method, allowedMethods, setting: HTTP_REQUEST_ENVIRONMENT.allowedMethods } },
  );
}

/** Maps a failed fetch to the guard's refusal, the caller's abort, or a retryable network error. */
function fetchFailed(error: unknown, url: URL, options: SendOptions): unknown {
  if (options.signal.aborted) return error;
  const refusal = options.guarded.refusal();
  if (refusal) return addressRefused(refusal);
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const detail = typeof cause?.message === "string" ? cause.message : String(error);
  return new SkillboxError("UPSTREAM_ERROR", `http-request: could not reach ${url.host}: ${detail}`, {
    retryable: true,
    cause: error,
    data: { host: url.host, ...(typeof cause?.code === "string" ? { code: cause.code } : {}) },
  });
}

async function sendOnce(request: PlannedRequest, options: SendOptions): Promise<Response> {
  try {
    // undici's own fetch, so its `dispatcher` is the guarded agent of the same undici copy.
    return await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      redirect: "manual",
      signal: options.signal,
      dispatcher: options.guarded.agent,
    });
  } catch (error) {
    throw fetchFailed(error, request.url, options);
  }
}

/** The next hop of a redirect, following what browsers do with the method, body and credentials. */
function redirectTarget(response: Response, request: PlannedRequest, location: string): PlannedRequest {
  let url: URL;
  try {
    url = new URL(location, request.url);
  } catch (error) {
    throw new SkillboxError(
      "UPSTREAM_ERROR",
      `http-request: ${request.url.host} redirected to an invalid URL (Location: ${JSON.stringify(location)})`,
      { retryable: false, cause: error, data: { host: request.url.host, status: response.status } },
    );
  }
  // Another origin must not receive credentials meant for this one, even ones configured to be forwarded.
  let headers = url.origin === request.url.origin ? request.headers : withoutCredentials(request.headers);
  const becomesGet =
    (response.status === 303 && request.method !== "HEAD") ||
    ((response.status === 301 || response.status === 302) && request.method === "POST");
  if (!becomesGet) return { url, method: request.method, headers, body: request.body };
  headers = Object.fromEntries(Object.entries(headers).filter(([name]) => name !== "content-type"));
  return { url, method: "GET", headers, body: undefined };
}

function tooManyRedirects(request: PlannedRequest, redirects: string[], maxRedirects: number): SkillboxError {
  return new SkillboxError(
    "UPSTREAM_ERROR",
    `http-request: ${request.url.host} redirected more than ${maxRedirects} times; request the final URL ` +
      `directly, or raise ${HTTP_REQUEST_ENVIRONMENT.maxRedirects}`,
    { retryable: false, data: { redirects, maxRedirects, setting: HTTP_REQUEST_ENVIRONMENT.maxRedirects } },
  );
}

/**
 * Sends the request and follows redirects by hand (`redirect: "manual"`), so every hop passes the
 * method allowlist and the SSRF guard again, credentials are dropped when the origin changes, and
 * the number of hops is capped. Redirect bodies are discarded unread.
 */
export async function sendWithRedirects(first: PlannedRequest, options: SendOptions): Promise<SentRequest> {
  const redirects: string[] = [];
  let request = first;
  let previous: URL | undefined;
  for (;;) {
    assertUrlAllowed(request.url, options.policy, previous);
    assertMethodAllowed(request.method, options.allowedMethods);
    const response = await sendOnce(request, options);
    const location = response.headers.get("location");
    if (!options.followRedirects || !REDIRECT_STATUSES.has(response.status) || location === null) {
      return { response, request, redirects };
    }
    await response.body?.cancel().catch(() => undefined);
    if (redirects.length >= options.maxRedirects)
      throw tooManyRedirects(request, redirects, options.maxRedirects);
    previous = request.url;
    request = redirectTarget(response, request, location);
    redirects.push(request.url.href);
  }
}
