import { A2A_VERSION_HEADER, AgentCard } from "@a2a-js/sdk";
import { A2A_LEGACY_PROTOCOL_VERSION } from "@a2a-js/sdk/compat/v0_3";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { ContentTypeNotSupportedError } from "@a2a-js/sdk/errors";
import { JsonRpcTransportHandler, ServerCallContext, validateVersion } from "@a2a-js/sdk/server";
import { SkillboxError, type SkillExecutor, type SkillRegistry } from "@skillbox/core";
import { findOverDeepPath } from "@skillbox/core/internal";
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { clientSignal } from "../http/client-signal.js";
import type { HttpEnv } from "../http/http-env.js";
import type { A2aOptions } from "./a2a-options.js";
import { agentCardFor } from "./agent-card-for.js";
import { createA2aRequestHandler } from "./create-a2a-request-handler.js";
import { OwnerUser } from "./owner-user.js";
import { CLIENT_SIGNAL_STATE_KEY } from "./skill-agent-executor.js";
import { toLegacyAgentCard } from "./to-legacy-agent-card.js";
import { type A2aJsonRpcEnvelope as JsonRpcEnvelope, traceA2aCall } from "./trace-a2a-call.js";

/** What {@link createA2aRoutes} needs from the app it is mounted in. */
export interface A2aRoutesOptions extends A2aOptions {
  registry: SkillRegistry;
  executor: SkillExecutor;
  /** The API's authentication: it sets the caller's owner id. */
  authenticate: MiddlewareHandler<HttpEnv>;
  limit: MiddlewareHandler;
  apiKeysConfigured: boolean;
}

/** The JSON-RPC methods answered with a stream (v1.0 and v0.3 names). */
const STREAMING_METHODS: ReadonlySet<string> = new Set([
  "SendStreamingMessage",
  "SubscribeToTask",
  "message/stream",
  "tasks/resubscribe",
]);

/** JSON-RPC's "Invalid params" error code. */
const INVALID_PARAMS = -32602;

/** Where the JSON-RPC endpoint is mounted. */
const A2A_ENDPOINT_PATH = "/a2a";

/**
 * Levels of a `message/send` body around a data part's value (body, params, message, parts, the
 * part): the body may nest this much deeper than a skill's input.
 */
const ENVELOPE_DEPTH = 5;

/**
 * The A2A routes: `GET /.well-known/agent-card.json` (no API key needed; the v1.0 card for a
 * request with `A2A-Version: 1.0`, else the v0.3 card) and `POST /a2a`, JSON-RPC behind the API's
 * authentication, v1.0 methods (`SendMessage`, `GetTask`, `CancelTask`, `ListTasks`) with
 * `A2A-Version: 1.0` and v0.3 ones (`message/send`, `tasks/get`, `tasks/cancel`) without it, as
 * the SDK's own servers route them. The streaming methods (`SendStreamingMessage`/`message/stream`,
 * `SubscribeToTask`/`tasks/resubscribe`) answer with Server-Sent Events. With an OpenTelemetry SDK
 * installed each request is also a SERVER span named after its method (see `traceA2aCall`).
 */
export function createA2aRoutes(options: A2aRoutesOptions): Hono<HttpEnv> {
  const publicUrl = checkedPublicUrl(options.publicUrl);
  const requestHandler = createA2aRequestHandler(options);
  const transport = new JsonRpcTransportHandler(requestHandler);
  const legacyTransport = new LegacyJsonRpcTransportHandler(requestHandler);
  const routes = new Hono<HttpEnv>();

  // Public for discovery — except on a keyless server, which serves only loopback host names
  // (its authentication checks just that), so a page cannot read it through a rebound DNS name.
  const guardCard: MiddlewareHandler<HttpEnv> = options.apiKeysConfigured
    ? (_context, next) => next()
    : options.authenticate;
  routes.get("/.well-known/agent-card.json", guardCard, (context) => {
    const card = agentCardFor({
      ...options,
      endpointUrl: `${publicUrl ?? new URL(context.req.url).origin}${A2A_ENDPOINT_PATH}`,
    });
    const legacy = isLegacy(context.req.header(A2A_VERSION_HEADER));
    const body = legacy ? toLegacyAgentCard(card) : { skills: [], ...(AgentCard.toJSON(card) as object) };
    return context.json(body, 200, { vary: A2A_VERSION_HEADER, "cache-control": "no-cache" });
  });

  routes.post(A2A_ENDPOINT_PATH, options.authenticate, options.limit, async (context) => {
    const version = context.req.header(A2A_VERSION_HEADER)?.trim() || A2A_LEGACY_PROTOCOL_VERSION;
    const legacy = version === A2A_LEGACY_PROTOCOL_VERSION;
    const toError = legacy
      ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError
      : JsonRpcTransportHandler.mapToJSONRPCError;
    const contentType = context.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
    if (contentType !== undefined && contentType !== "application/json") {
      const error = new ContentTypeNotSupportedError(
        `Content-Type must be application/json, got "${contentType}"`,
      );
      return answer(context, { jsonrpc: "2.0", id: null, error: toError(error) });
    }
    let body: unknown;
    try {
      body = JSON.parse(await context.req.text());
    } catch {
      return answer(context, {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: "Invalid JSON payload." },
      });
    }
    const id = idOf(body);
    // Refused before the SDK sees it: its message conversion recurses, and a body thousands deep
    // overflowed the stack there; the executor would refuse such an input anyway.
    const maxDepth = options.executor.maxNestingDepth + ENVELOPE_DEPTH;
    const overDeepPath = findOverDeepPath(body, maxDepth, "");
    if (overDeepPath !== undefined) {
      const message =
        `The request nests objects and arrays deeper than ${maxDepth} levels (at ${overDeepPath}); ` +
        `a skill's input may nest ${options.executor.maxNestingDepth} levels: send a flatter value`;
      return answer(context, {
        jsonrpc: "2.0",
        id,
        error: { code: INVALID_PARAMS, message, data: { path: overDeepPath, maxDepth } },
      });
    }
    const method = (body as { method?: unknown } | null)?.method;
    // A stream's client learns the task id from its first event, so leaving does not cancel it.
    const streaming = STREAMING_METHODS.has(String(method));
    const callContext = new ServerCallContext({
      user: new OwnerUser(context.get("owner"), options.apiKeysConfigured),
      requestedVersion: version,
      state: new Map(streaming ? [] : [[CLIENT_SIGNAL_STATE_KEY, clientSignal(context)]]),
    });
    const answered = await traceA2aCall({ method, id }, async () => {
      try {
        validateVersion(version, await requestHandler.getAgentCard(), "JSONRPC");
      } catch (error) {
        return { jsonrpc: "2.0", id, error: toError(error) };
      }
      const handled = await (legacy ? legacyTransport : transport).handle(
        body as Record<string, unknown>,
        callContext,
      );
      if (Symbol.asyncIterator in handled) return streamAnswer(handled, id, toError);
      return handled as JsonRpcEnvelope;
    });
    return answered instanceof Response ? answered : answer(context, answered);
  });

  return routes;
}

/** JSON-RPC answers are 200 whatever they say, as the SDK's servers answer them. */
function answer(context: Context, envelope: JsonRpcEnvelope): Response {
  return context.json(envelope, 200);
}

/**
 * A streaming method's answer: its first event decides — a failure before it (an unknown task,
 * an invalid message) is a plain JSON-RPC error (the envelope returned); otherwise Server-Sent Events, one `data:` line
 * of a JSON-RPC envelope per event, as the SDK's own servers send them, a failure mid-stream
 * an `event: error`. The client going away ends the stream (and the subscription under it).
 */
async function streamAnswer(
  stream: AsyncGenerator<unknown, void, undefined>,
  id: string | number | null,
  toError: (error: unknown) => unknown,
): Promise<Response | JsonRpcEnvelope> {
  let first: IteratorResult<unknown, void>;
  try {
    first = await stream.next();
  } catch (error) {
    return { jsonrpc: "2.0", id, error: toError(error) };
  }
  const encoder = new TextEncoder();
  const event = (value: unknown) => encoder.encode(`data: ${JSON.stringify(value)}\n\n`);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (first.done) controller.close();
      else controller.enqueue(event(first.value));
    },
    async pull(controller) {
      try {
        const next = await stream.next();
        if (next.done) controller.close();
        else controller.enqueue(event(next.value));
      } catch (error) {
        const envelope = { jsonrpc: "2.0", id, error: toError(error) };
        controller.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify(envelope)}\n\n`));
        controller.close();
      }
    },
    async cancel() {
      await stream.return(undefined);
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      // Proxies such as nginx would hold the events back otherwise.
      "x-accel-buffering": "no",
    },
  });
}

function isLegacy(version: string | undefined): boolean {
  const trimmed = version?.trim() ?? "";
  return trimmed === "" || trimmed.startsWith("0.");
}

function idOf(body: unknown): string | number | null {
  const id = typeof body === "object" && body !== null ? (body as { id?: unknown }).id : undefined;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

function checkedPublicUrl(publicUrl: string | undefined): string | undefined {
  if (publicUrl === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(publicUrl);
  } catch {
    url = undefined;
  }
  if (
    url === undefined ||
    (url.protocol !== "http:" && url.protocol !== "https:") ||
    url.search ||
    url.hash
  ) {
    throw new SkillboxError(
      "SERVER_CONFIG_INVALID",
      `createHttpApp: \`a2a.publicUrl\` must be an http(s) URL without query or fragment, such as ` +
        `"https://skills.example.com", got ${JSON.stringify(publicUrl)}`,
    );
  }
  return url.href.replace(/\/+$/, "");
}
