import { randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { createCatalogServer, type McpServerHandle, type McpServerOptions } from "./create-mcp-server.js";
import { ToolCatalog } from "./tool-catalog.js";

/** What {@link createMcpHttpHandler} returns. */
export interface McpHttpHandler {
  /**
   * Answers one MCP request (POST, GET or DELETE on the MCP endpoint) made by `owner`, who must
   * already be authenticated by the caller (the HTTP API maps API keys to owners).
   */
  handle(request: Request, owner: string): Promise<Response>;
  /** Ends every session (open event streams included); later requests get 503. */
  close(): Promise<void>;
}

interface McpHttpSession {
  owner: string;
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
 * - Sessions live until DELETE or `close()`; there is no idle expiry.
 */
export function createMcpHttpHandler(options: Omit<McpServerOptions, "owner">): McpHttpHandler {
  const catalog = new ToolCatalog(options.registry);
  const sessions = new Map<string, McpHttpSession>();
  /** Every open server, including those whose `initialize` is still in flight. */
  const servers = new Set<McpServerHandle>();
  let closed = false;

  const startSession = async (request: Request, owner: string): Promise<Response> => {
    const handle = createCatalogServer({ ...options, owner }, catalog);
    servers.add(handle);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { owner, transport, handle });
      },
    });
    // Runs on DELETE (the transport closes itself after answering) and on close().
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      servers.delete(handle);
      void handle.close();
    };
    await handle.server.connect(transport);
    const response = await transport.handleRequest(request);
    // Not an initialize request (or not a valid one): the SDK refused it and no session exists.
    if (transport.sessionId === undefined) await handle.close();
    return response;
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
        return session.transport.handleRequest(request);
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
    async close() {
      closed = true;
      await Promise.allSettled([...servers].map((handle) => handle.close()));
      servers.clear();
      sessions.clear();
      catalog.close();
    },
  };
}
