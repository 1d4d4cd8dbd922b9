import { type Attributes, context as otelContext, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { onResponseEnd } from "../mcp/on-response-end.js";
import { boundedAttribute } from "../telemetry/bounded-attribute.js";
import { serverTracer } from "../telemetry/server-tracer.js";

/** A JSON-RPC answer of the A2A endpoint. */
export interface A2aJsonRpcEnvelope {
  jsonrpc: "2.0";
  id: string | number | null;
  result?: unknown;
  error?: unknown;
}

/** The JSON-RPC methods of A2A v1.0 and v0.3; any other is traced as `_OTHER` (bounded span names). */
const A2A_METHODS: ReadonlySet<string> = new Set([
  "SendMessage",
  "SendStreamingMessage",
  "GetTask",
  "ListTasks",
  "CancelTask",
  "SubscribeToTask",
  "CreateTaskPushNotificationConfig",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "DeleteTaskPushNotificationConfig",
  "GetExtendedAgentCard",
  "message/send",
  "message/stream",
  "tasks/get",
  "tasks/cancel",
  "tasks/resubscribe",
  "tasks/pushNotificationConfig/set",
  "tasks/pushNotificationConfig/get",
  "tasks/pushNotificationConfig/list",
  "tasks/pushNotificationConfig/delete",
  "agent/getAuthenticatedExtendedCard",
]);

/** What {@link traceA2aCall} knows of the request before it runs. */
export interface A2aCallInfo {
  /** The body's `method`, whatever it is. */
  method: unknown;
  id: string | number | null;
}

/**
 * Runs one A2A JSON-RPC request inside an OpenTelemetry SERVER span named after its method
 * (`message/send`, `SendMessage`, `tasks/get`, …; `rpc.system.name` `jsonrpc`, `rpc.method`,
 * `jsonrpc.request.id`), a child of the context active when it arrived — the HTTP request's span,
 * itself the child of the request's `traceparent` header — and the active span while the method
 * runs, so the execution a message starts is its child. An error answer sets `error.type` and
 * `rpc.response.status_code` to its JSON-RPC code and the status to ERROR. A streamed answer's span
 * ends when the stream does, or when the client leaves. With no SDK installed it only calls `run`.
 *
 * @internal
 */
export async function traceA2aCall(
  info: A2aCallInfo,
  run: () => Promise<A2aJsonRpcEnvelope | Response>,
): Promise<A2aJsonRpcEnvelope | Response> {
  const tracer = serverTracer();
  if (tracer === undefined) return run();
  const method = typeof info.method === "string" && A2A_METHODS.has(info.method) ? info.method : "_OTHER";
  const attributes: Attributes = { "rpc.system.name": "jsonrpc", "rpc.method": method };
  // The caller's own strings: cut, as they stay queued with the span.
  if (method === "_OTHER" && typeof info.method === "string") {
    attributes["rpc.method_original"] = boundedAttribute(info.method);
  }
  if (info.id !== null) attributes["jsonrpc.request.id"] = boundedAttribute(String(info.id));
  const parent = otelContext.active();
  const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes }, parent);
  let answer: A2aJsonRpcEnvelope | Response;
  try {
    answer = await otelContext.with(trace.setSpan(parent, span), run);
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    throw error;
  }
  if (answer instanceof Response) return onResponseEnd(answer, () => span.end());
  const code = (answer.error as { code?: unknown } | undefined)?.code;
  if (answer.error !== undefined) {
    const message = (answer.error as { message?: unknown }).message;
    span.setAttributes({ "error.type": String(code ?? "_OTHER"), "rpc.response.status_code": String(code) });
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: typeof message === "string" ? message : undefined,
    });
  }
  span.end();
  return answer;
}
