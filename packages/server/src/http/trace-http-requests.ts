import {
  type Attributes,
  context as otelContext,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from "@opentelemetry/api";
import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import { onResponseEnd } from "../mcp/on-response-end.js";
import { serverTracer } from "../telemetry/server-tracer.js";

/** Reads propagation fields (`traceparent`, `tracestate`, …) from a Fetch `Headers`. */
const HEADERS_GETTER: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

/** The methods the HTTP semantic conventions name; any other is `_OTHER` (keeps span names bounded). */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  "CONNECT",
  "DELETE",
  "GET",
  "HEAD",
  "OPTIONS",
  "PATCH",
  "POST",
  "PUT",
  "TRACE",
]);

/**
 * Hono middleware: each request is an OpenTelemetry SERVER span, `<METHOD> <route>` (the route
 * template, `POST /api/skills/:name/execute`), whose parent is the W3C trace context of the
 * request's `traceparent`/`tracestate` headers (through the application's propagator). The span
 * is the active one while the route runs, so the executions it starts are its children. It
 * carries the HTTP semantic-convention attributes (`http.request.method`, `http.route`,
 * `url.path`, `url.scheme`, `http.response.status_code`) and ends with status ERROR on a 5xx. An
 * event stream's span ends when the stream does, or when the client leaves.
 *
 * With no OpenTelemetry SDK installed it only calls `next()`.
 *
 * @internal
 */
export const traceHttpRequests: MiddlewareHandler = async (context, next) => {
  const tracer = serverTracer();
  if (tracer === undefined) return next();
  const parent = propagation.extract(otelContext.active(), context.req.raw.headers, HEADERS_GETTER);
  const method = KNOWN_METHODS.has(context.req.method) ? context.req.method : "_OTHER";
  const attributes: Attributes = {
    "http.request.method": method,
    "url.path": context.req.path,
    "url.scheme": context.req.url.startsWith("https:") ? "https" : "http",
  };
  if (method === "_OTHER") attributes["http.request.method_original"] = context.req.method;
  const span = tracer.startSpan(
    method === "_OTHER" ? "HTTP" : method,
    { kind: SpanKind.SERVER, attributes },
    parent,
  );
  const ownIndex = context.req.routeIndex;
  try {
    await otelContext.with(trace.setSpan(parent, span), next);
  } catch (error) {
    // The app's onError answers every error, so this is a failure of that handler itself.
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    throw error;
  }
  // The deepest handler that ran: the route that answered, or the middleware that refused.
  const route = context.req.routeIndex === ownIndex ? undefined : routePath(context);
  finish(span, method, route, context.res.status);
  const response = context.res;
  if (response.body !== null && response.headers.get("content-type")?.startsWith("text/event-stream")) {
    context.res = onResponseEnd(response, () => span.end());
  } else {
    span.end();
  }
};

function finish(span: Span, method: string, route: string | undefined, status: number): void {
  if (route !== undefined && method !== "_OTHER") span.updateName(`${method} ${route}`);
  if (!span.isRecording()) return;
  if (route !== undefined) span.setAttribute("http.route", route);
  span.setAttribute("http.response.status_code", status);
  if (status >= 500) {
    span.setAttribute("error.type", String(status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
}
