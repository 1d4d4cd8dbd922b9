import type { Headers } from "undici";

/**
 * Headers that describe one connection, not the request: fetch sets them itself, and letting input
 * set `host` would let a caller aim a request at one virtual host through another's address.
 */
export const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "content-length",
  "te",
  "trailer",
  "upgrade",
  "expect",
]);

/**
 * Credentials dropped from the input unless `SKILLBOX_HTTP_FORWARD_HEADERS` names them: a skill
 * input is stored in the audit trail and may be written by a model, so secrets do not ride along by default.
 */
const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "x-api-key",
  "x-auth-token",
  "x-access-token",
  "x-csrf-token",
  "x-xsrf-token",
]);

/** A header left out of the request, named without its value. */
export interface DroppedHeader {
  name: string;
  reason: "hop-by-hop" | "credential";
}

/** The headers to send and the ones left out. */
export interface FilteredHeaders {
  headers: Record<string, string>;
  dropped: DroppedHeader[];
}

/**
 * Lower-cases header names and drops hop-by-hop headers always and credential headers unless listed
 * in `forwardHeaders`.
 */
export function filterRequestHeaders(
  headers: Record<string, string>,
  forwardHeaders: readonly string[],
): FilteredHeaders {
  const kept: Record<string, string> = {};
  const dropped: DroppedHeader[] = [];
  for (const [rawName, value] of Object.entries(headers)) {
    const name = rawName.toLowerCase();
    if (HOP_BY_HOP_HEADERS.has(name)) dropped.push({ name, reason: "hop-by-hop" });
    else if (CREDENTIAL_HEADERS.has(name) && !forwardHeaders.includes(name)) {
      dropped.push({ name, reason: "credential" });
    } else kept[name] = value;
  }
  return { headers: kept, dropped };
}

/**
 * Adds the execution's W3C trace context (`ctx.traceHeaders()`) to the request headers, so the
 * server's spans join the execution's trace — unless the caller already set `traceparent`
 * (`headers` are lower-cased by {@link filterRequestHeaders}): a caller propagating a trace of
 * its own keeps it, `tracestate` included, since the two only make sense together.
 */
export function withTraceHeaders(
  headers: Record<string, string>,
  traceHeaders: Record<string, string>,
): Record<string, string> {
  if ("traceparent" in headers || Object.keys(traceHeaders).length === 0) return headers;
  return { ...headers, ...traceHeaders };
}

/** Removes credential headers before a redirect to another origin, even ones configured to be forwarded. */
export function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.has(name)));
}

/** Response headers as one record; `set-cookie` only when `forwardHeaders` lists it. */
export function collectResponseHeaders(
  headers: Headers,
  forwardHeaders: readonly string[],
): Record<string, string> {
  const collected: Record<string, string> = {};
  // Headers yields lower-cased names with repeated values joined, except set-cookie: once per cookie.
  for (const [name, value] of headers) {
    if (name === "set-cookie" && !forwardHeaders.includes("set-cookie")) continue;
    collected[name] = name in collected ? `${collected[name]}, ${value}` : value;
  }
  return collected;
}
