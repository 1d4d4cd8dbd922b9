import { randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { SkillboxError } from "@skillbox/core";
import { createCatalogServer, type McpServerHandle, type McpServerOptions } from "./create-mcp-server.js";
import { type McpSessionEnd, McpSessionPool, type PooledSession } from "./mcp-session-pool.js";
import { onResponseEnd } from "./on-response-end.js";
import { ToolCatalog } from "./tool-catalog.js";

/** Sessions one owner may hold by default. */
export const DEFAULT_MAX_SESSIONS_PER_OWNER = 100;
/** Sessions a handler holds in all by default. */
export const DEFAULT_MAX_SESSIONS = 10_000;
/** Idle time after which a session ends by default: 15 minutes. */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 15 * 60 * 1000;
/** The largest timer Node honours; a longer `setTimeout` fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** Options of {@link createMcpHttpHandler}. */
export interface McpHttpHandlerOptions extends Omit<McpServerOptions, "owner"> {
  /**
   * Sessions one owner may hold (default 100). A new one past it ends that owner's least recently
   * used idle session; when all are in use it is refused with 429.
   */
  maxSessionsPerOwner?: number;
  /**
   * Sessions in all (default 10 000). A new one past it ends its own owner's least recently used
   * idle session — never another owner's — and is refused with 503 when that owner has none idle.
   */
  maxSessions?: number;
  /** A session with no request open (an open event stream counts) for this long ends (default 15 min). */
  sessionIdleTimeoutMs?: number;
  /** Called (synchronously; it must not throw) when a session ends, with why: `deleted`, `expired`, `evicted`, `closed`. */
  onSessionEnd?: (end: McpSessionEnd) => void;
}

/** What {@link createMcpHttpHandler} returns. */
export interface McpHttpHandler {
  /**
   * Answers one MCP request (POST, GET or DELETE on the MCP endpoint) made by `owner`, who must
   * already be authenticated by the caller (the HTTP API maps API keys to owners).
   */
  handle(request: Request, owner: string): Promise<Response>;
  /** Sessions open (counting those being initialised) for `owner`, or in all. */
  sessionCount(owner?: string): number;
  /** Ends every session (open event streams included); later requests get 503. */
  close(): Promise<void>;
}

interface McpHttpSession {
  transport: WebStandardStreamableHTTPServerTransport;
  handle: McpServerHandle;
}

/** A JSON-RPC error answer, shaped as the SDK's transport shapes its own. */
function jsonRpcErrorResponse(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/**
 * Handles MCP Streamable HTTP requests (POST/GET/DELETE /mcp) for any owner; sessions are kept
 * per owner.
 *
 * Each MCP session (`Mcp-Session-Id`, a random UUID) has its own SDK transport (the Web-standard
 * one: Request in, Response out, which is what Hono hands over) and its own server from
 * {@link createMcpServer}; all sessions share one view of the registry.
 *
 * - A POST without a session id starts a session if it is an `initialize` request (otherwise the
 *   SDK answers 400 and nothing is kept). The session belongs to the owner who started it.
 * - A request naming a session that does not exist, or that another owner started, gets 404
 *   `Session not found` — the same answer, so session ids of other owners cannot be probed; per
 *   the spec the client then starts a new session.
 * - GET opens the session's event stream (where `notifications/tools/list_changed` arrives);
 *   DELETE ends the session. GET or DELETE without a session id get 400, other methods 405.
 * - Sessions are bounded: `maxSessionsPerOwner` (default 100) per owner and `maxSessions`
 *   (default 10 000) in all. A session is idle while none of its requests is open (its event
 *   stream counts as open); a valid `initialize` past a cap ends its owner's least recently used
 *   idle session (never another owner's: one owner cannot push the others out), and is refused
 *   when that owner has none idle — 429 for the owner cap, 503 for the total — with a message
 *   naming the limit. Room is made only once the SDK has accepted the request as an
 *   `initialize`, so a malformed one never ends a session.
 * - A session idle for `sessionIdleTimeoutMs` (default 15 min) ends: its transport and server
 *   close, and a request naming it gets 404 `Session not found`, as the spec has it.
 */
export function createMcpHttpHandler(options: McpHttpHandlerOptions): McpHttpHandler {
  const limits = {
    maxSessionsPerOwner: readLimit(options, "maxSessionsPerOwner", DEFAULT_MAX_SESSIONS_PER_OWNER),
    maxSessions: readLimit(options, "maxSessions", DEFAULT_MAX_SESSIONS),
    sessionIdleTimeoutMs: readLimit(options, "sessionIdleTimeoutMs", DEFAULT_SESSION_IDLE_TIMEOUT_MS),
  };
  const { maxSessionsPerOwner, maxSessions, sessionIdleTimeoutMs, onSessionEnd, ...serverOptions } = options;
  const catalog = new ToolCatalog(options.registry);
  const sessions = new McpSessionPool<McpHttpSession>(limits, (session, reason) => {
    // Closing the transport ends its open streams and runs its onclose (which closes the server).
    void session.value.transport.close();
    onSessionEnd?.({ sessionId: session.id, owner: session.owner, reason });
  });
  /** Every open server, including those whose `initialize` is still in flight. */
  const servers = new Set<McpServerHandle>();
  let closed = false;

  const idleMinutes = () => {
    const minutes = limits.sessionIdleTimeoutMs / 60_000;
    return minutes >= 1 ? `${Math.round(minutes)} min` : `${limits.sessionIdleTimeoutMs} ms`;
  };

  const refusal = (full: "owner" | "total", owner: string): Response =>
    full === "owner"
      ? jsonRpcErrorResponse(
          429,
          -32000,
          `Too many MCP sessions for owner "${owner}" (limit ${limits.maxSessionsPerOwner}, all in use): idle sessions end after ${idleMinutes()}, and DELETE with the Mcp-Session-Id header ends one now`,
        )
      : jsonRpcErrorResponse(
          503,
          -32000,
          `Too many MCP sessions on this server (limit ${limits.maxSessions}, none of this owner's idle): idle sessions end after ${idleMinutes()}; try again later`,
        );

  const startSession = async (request: Request, owner: string): Promise<Response> => {
    const room = sessions.reserve(owner);
    if ("full" in room) return refusal(room.full, owner);
    const handle = createCatalogServer({ ...serverOptions, owner }, catalog);
    servers.add(handle);
    let session: PooledSession<McpHttpSession> | undefined;
    let refused: "owner" | "total" | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // The SDK calls this only once the request proved a valid initialize: only then may room be
      // made by ending an idle session, so a malformed request never ends anyone's session.
      onsessioninitialized: (sessionId) => {
        // close() ran while this initialize was in flight: keep nothing.
        if (closed) return;
        const committed = room.commit(sessionId, { transport, handle });
        if ("full" in committed) refused = committed.full;
        else session = committed;
      },
    });
    // Runs on DELETE (the transport closes itself after answering), on expiry, eviction and close().
    transport.onclose = () => {
      if (session !== undefined) sessions.end(session, "deleted");
      servers.delete(handle);
      void handle.close();
    };
    let response: Response;
    try {
      await handle.server.connect(transport);
      response = await transport.handleRequest(request);
    } catch (error) {
      room.release();
      if (session !== undefined) sessions.end(session, "deleted");
      await handle.close();
      throw error;
    }
    room.release();
    // Not an initialize request (or not a valid one): the SDK refused it and no session exists.
    // Or a concurrent initialize of the same owner took the room this one counted on.
    if (session === undefined) {
      if (refused !== undefined) await response.body?.cancel();
      await handle.close();
      return refused === undefined ? response : refusal(refused, owner);
    }
    const started = session;
    return onResponseEnd(response, () => sessions.finish(started));
  };

  const continueSession = async (session: PooledSession<McpHttpSession>, request: Request) => {
    sessions.begin(session);
    let response: Response;
    try {
      response = await session.value.transport.handleRequest(request);
    } catch (error) {
      sessions.finish(session);
      throw error;
    }
    return onResponseEnd(response, () => sessions.finish(session));
  };

  return {
    async handle(request, owner) {
      if (closed) return jsonRpcErrorResponse(503, -32000, "The MCP endpoint is shutting down");
      const sessionId = request.headers.get("mcp-session-id");
      if (sessionId !== null) {
        const session = sessions.get(sessionId);
        if (session === undefined || session.owner !== owner) {
          return jsonRpcErrorResponse(404, -32001, "Session not found");
        }
        return continueSession(session, request);
      }
      switch (request.method) {
        case "POST":
          return startSession(request, owner);
        case "GET":
        case "DELETE":
          return jsonRpcErrorResponse(400, -32000, "Bad Request: Mcp-Session-Id header is required");
        default:
          return jsonRpcErrorResponse(405, -32000, "Method not allowed", { allow: "GET, POST, DELETE" });
      }
    },
    sessionCount(owner) {
      return sessions.count(owner);
    },
    async close() {
      closed = true;
      sessions.endAll("closed");
      await Promise.allSettled([...servers].map((handle) => handle.close()));
      servers.clear();
      catalog.close();
    },
  };
}

/** Reads a whole-number limit of the options, naming it when it is not one. */
function readLimit(
  options: McpHttpHandlerOptions,
  name: "maxSessionsPerOwner" | "maxSessions" | "sessionIdleTimeoutMs",
  fallback: number,
): number {
  const value = options[name] ?? fallback;
  const maximum = name === "sessionIdleTimeoutMs" ? MAX_TIMER_MS : Number.MAX_SAFE_INTEGER;
  if (!Number.isInteger(value) || value < 1 || value > maximum) {
    throw new SkillboxError(
      "SERVER_CONFIG_INVALID",
      `createMcpHttpHandler: \`${name}\` must be a whole number from 1 to ${maximum}, got ${JSON.stringify(options[name])}`,
    );
  }
  return value;
}
