import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type CallToolRequest,
  type CallToolResult,
  McpError,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import {
  type Attributes,
  type Context,
  type Link,
  context as otelContext,
  propagation,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from "@opentelemetry/api";
import { boundedAttribute } from "../telemetry/bounded-attribute.js";
import { serverTracer } from "../telemetry/server-tracer.js";

/** Reads the string entries of a request's `params._meta` (or of its HTTP headers) as propagation fields. */
const RECORD_GETTER: TextMapGetter<Record<string, unknown>> = {
  get(carrier, key) {
    const value = carrier[key];
    return typeof value === "string" || Array.isArray(value) ? (value as string | string[]) : undefined;
  },
  keys: (carrier) => Object.keys(carrier),
};

/**
 * Runs one `tools/call` inside an OpenTelemetry SERVER span `tools/call <tool>`, following the MCP
 * semantic conventions (`mcp.method.name`, `gen_ai.tool.name`, `gen_ai.operation.name`
 * `execute_tool`, `jsonrpc.request.id`, `mcp.session.id`; `error.type` `tool_error` for a result
 * with `isError`, the JSON-RPC code for a protocol error).
 *
 * The parent is the trace context in `params._meta` (`traceparent`, `tracestate`, the keys the MCP
 * specification reserves there, SEP-414), extracted with the application's propagator; the
 * context active when the request arrived (the HTTP request's span) is then a link. Without
 * `_meta` trace context the parent is that active context, or failing that the request's own
 * HTTP headers (Streamable HTTP). With no SDK installed it only calls `call`.
 *
 * @internal
 */
export async function traceToolCall(
  request: CallToolRequest,
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  call: () => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const tracer = serverTracer();
  if (tracer === undefined) return call();
  const ambient = otelContext.active();
  const { parent, links } = parentOf(ambient, request.params._meta, extra.requestInfo?.headers);
  // The client's own strings until the catalog knows them: cut, as they stay queued with the span.
  const toolName = boundedAttribute(request.params.name);
  const attributes: Attributes = {
    "mcp.method.name": "tools/call",
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": toolName,
    "jsonrpc.request.id": boundedAttribute(String(extra.requestId)),
  };
  if (extra.sessionId !== undefined) attributes["mcp.session.id"] = extra.sessionId;
  if (extra.requestInfo !== undefined) {
    attributes["network.transport"] = "tcp";
    // Streamable HTTP sends the negotiated version on every request after `initialize`.
    const protocolVersion = extra.requestInfo.headers["mcp-protocol-version"];
    if (typeof protocolVersion === "string") attributes["mcp.protocol.version"] = protocolVersion;
  }
  const span = tracer.startSpan(
    `tools/call ${toolName}`,
    { kind: SpanKind.SERVER, attributes, links },
    parent,
  );
  try {
    const result = await otelContext.with(trace.setSpan(parent, span), call);
    if (result.isError === true) {
      span.setAttribute("error.type", "tool_error");
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    return result;
  } catch (error) {
    if (error instanceof McpError) {
      // An unknown tool: its name is the client's invention, kept out of the span name.
      if (error.code === -32602) span.updateName("tools/call");
      span.setAttributes({
        "error.type": String(error.code),
        "rpc.response.status_code": String(error.code),
      });
    } else {
      span.setAttribute("error.type", error instanceof Error ? error.name : "_OTHER");
      span.recordException(error as Error);
    }
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : undefined,
    });
    throw error;
  } finally {
    span.end();
  }
}

function parentOf(
  ambient: Context,
  meta: Record<string, unknown> | undefined,
  headers: Record<string, unknown> | undefined,
): { parent: Context; links: Link[] | undefined } {
  if (meta !== undefined && typeof meta.traceparent === "string") {
    const parent = propagation.extract(ambient, meta, RECORD_GETTER);
    const transport = trace.getSpanContext(ambient);
    // The MCP conventions: the caller's context is the parent, the transport's a link. (A
    // traceparent the propagator refused leaves the ambient context as the parent: no link.)
    const linked = transport !== undefined && trace.getSpanContext(parent) !== transport;
    return { parent, links: linked ? [{ context: transport }] : undefined };
  }
  if (trace.getSpanContext(ambient) === undefined && headers !== undefined) {
    return { parent: propagation.extract(ambient, headers, RECORD_GETTER), links: undefined };
  }
  return { parent: ambient, links: undefined };
}
