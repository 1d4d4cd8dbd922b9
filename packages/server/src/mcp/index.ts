export {
  createMcpHttpHandler,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_SESSIONS_PER_OWNER,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  type McpHttpHandler,
  type McpHttpHandlerOptions,
} from "./create-mcp-http-handler.js";
export { createMcpServer, type McpServerHandle, type McpServerOptions } from "./create-mcp-server.js";
export type { McpSessionEnd, McpSessionEndReason } from "./mcp-session-pool.js";
export { type McpStdioSession, serveMcpStdio } from "./serve-mcp-stdio.js";
