import { createAddressPolicy, SkillboxError, type SkillContext } from "@skillbox/core/handler";
import type { Response } from "undici";
import { createGuardedAgent } from "./guarded-agent.js";
import type { HttpRequestInput, HttpRequestOutput } from "./http-request-schemas.js";
import { HTTP_REQUEST_ENVIRONMENT, type HttpRequestSettings } from "./http-request-settings.js";
import {
  collectResponseHeaders,
  type DroppedHeader,
  filterRequestHeaders,
  withTraceHeaders,
} from "./request-headers.js";
import { decodeBody, readLimitedBody } from "./response-body.js";
import { type PlannedRequest, sendWithRedirects } from "./send-request.js";

function inputInvalid(message: string): SkillboxError {
  return new SkillboxError("INPUT_INVALID", `http-request: ${message}`);
}

function responseLimit(input: HttpRequestInput, settings: HttpRequestSettings): number {
  if (input.maxResponseBytes === undefined) return settings.maxResponseBytes;
  if (input.maxResponseBytes <= settings.maxResponseBytes) return input.maxResponseBytes;
  throw new SkillboxError(
    "REQUEST_REFUSED",
    `http-request: \`maxResponseBytes\` ${input.maxResponseBytes} is above the configured cap of ` +
      `${settings.maxResponseBytes}; ask for less, or raise ${HTTP_REQUEST_ENVIRONMENT.maxResponseBytes}`,
    { data: { maxResponseBytes: input.maxResponseBytes, limit: settings.maxResponseBytes } },
  );
}

/** Only names and reasons are logged: the values are the secrets the filter exists to keep out. */
function warnDropped(dropped: DroppedHeader[], context: SkillContext): void {
  if (dropped.length === 0) return;
  context.logger.warn("http-request: dropped request headers", {
    headers: dropped.map(({ name, reason }) => `${name} (${reason})`),
    hint: `credential headers are sent only when ${HTTP_REQUEST_ENVIRONMENT.forwardHeaders} lists them; hop-by-hop headers never`,
  });
}

function plan(input: HttpRequestInput, headers: Record<string, string>): PlannedRequest {
  const method = input.method.toUpperCase();
  const hasJson = input.json !== undefined;
  if (hasJson && input.body !== undefined) throw inputInvalid("give either `body` or `json`, not both");
  const body = hasJson ? JSON.stringify(input.json) : input.body;
  if (body !== undefined && (method === "GET" || method === "HEAD")) {
    throw inputInvalid(
      `a ${method} request cannot have a body; use POST (or another method) to send \`body\` or \`json\``,
    );
  }
  // A caller's own content-type (say application/merge-patch+json) wins over the default.
  const withType =
    hasJson && !("content-type" in headers) ? { ...headers, "content-type": "application/json" } : headers;
  return { url: new URL(input.url), method, headers: withType, body };
}

/** Responses to HEAD, 204 and 304 have no body, whatever their Content-Length says. */
function hasNoBody(method: string, status: number): boolean {
  return method === "HEAD" || status === 204 || status === 304;
}

function bodyFailed(error: unknown, host: string): unknown {
  if (error instanceof SkillboxError) return error;
  return new SkillboxError(
    "UPSTREAM_ERROR",
    `http-request: reading the response from ${host} failed: ${String(error)}`,
    {
      retryable: true,
      cause: error,
      data: { host },
    },
  );
}

async function readBody(response: Response, request: PlannedRequest, limit: number, abort: () => void) {
  if (hasNoBody(request.method, response.status)) {
    await response.body?.cancel().catch(() => undefined);
    return new Uint8Array(0);
  }
  const host = request.url.host;
  try {
    return await readLimitedBody(response, { host, limit, abort });
  } catch (error) {
    throw bodyFailed(error, host);
  }
}

/**
 * Runs one `http-request` call under `settings`: filters headers, adds the execution's trace
 * context, sends through the SSRF-guarded agent (following redirects by hand), reads the body up
 * to the cap and decodes it. HTTP error statuses are returned, not thrown. `ctx.signal` aborts the
 * request at any point.
 */
export async function performHttpRequest(
  input: HttpRequestInput,
  settings: HttpRequestSettings,
  context: SkillContext,
): Promise<HttpRequestOutput> {
  const limit = responseLimit(input, settings);
  const { headers, dropped } = filterRequestHeaders(input.headers ?? {}, settings.forwardHeaders);
  // Trace headers ride along to every hop, other origins included: they carry ids, no secret.
  const first = plan(input, withTraceHeaders(headers, context.traceHeaders()));
  warnDropped(dropped, context);
  const controller = new AbortController();
  const signal = AbortSignal.any([context.signal, controller.signal]);
  const policy = createAddressPolicy(settings.allowPrivate);
  const guarded = createGuardedAgent(policy);
  try {
    const { response, request, redirects } = await sendWithRedirects(first, {
      policy,
      guarded,
      signal,
      allowedMethods: settings.allowedMethods,
      maxRedirects: settings.maxRedirects,
      followRedirects: input.followRedirects,
    });
    const host = request.url.host;
    const bytes = await readBody(response, request, limit, () => controller.abort());
    const contentType = response.headers.get("content-type");
    return {
      status: response.status,
      statusText: response.statusText,
      url: request.url.href,
      redirects,
      headers: collectResponseHeaders(response.headers, settings.forwardHeaders),
      ...decodeBody(bytes, contentType, input.responseType, host),
      bytes: bytes.byteLength,
    };
  } catch (error) {
    // A timeout or cancellation surfaces as whatever fetch threw; the executor's reason is the truth.
    if (context.signal.aborted) throw context.signal.reason ?? error;
    throw error;
  } finally {
    await guarded.agent.destroy().catch(() => undefined);
  }
}
