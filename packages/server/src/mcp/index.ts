export { createMcpHttpHandler, type McpHttpHandler } from "./create-mcp-http-handler.js";
export { createMcpServer, type McpServerHandle, type McpServerOptions } from "./create-mcp-server.js";
export { type McpStdioSession, serveMcpStdio } from "./serve-mcp-stdio.js";
export { skillNameFromToolName, skillToolName } from "./skill-tool-name.js";
