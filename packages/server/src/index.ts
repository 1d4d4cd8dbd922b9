/**
 * `@skillbox/server`: the HTTP API, the MCP server and the A2A agent (named exports only;
 * packages/server/test/public-surface.test.ts lists them).
 */
export type { A2aOptions } from "./a2a/a2a-options.js";
export { type AgentCardOptions, agentCardFor } from "./a2a/agent-card-for.js";
export {
  BoundedTaskStore,
  type BoundedTaskStoreOptions,
  DEFAULT_MAX_BYTES_PER_TASK,
  DEFAULT_MAX_TASK_BYTES,
  DEFAULT_MAX_TASKS,
} from "./a2a/bounded-task-store.js";
export { type A2aRequestHandlerOptions, createA2aRequestHandler } from "./a2a/create-a2a-request-handler.js";
export { readSkillCall, type SkillCall } from "./a2a/read-skill-call.js";
export { SkillAgentExecutor, type SkillAgentExecutorOptions } from "./a2a/skill-agent-executor.js";
export type { CallerView } from "./http/caller-routes.js";
export { createHttpApp, type HttpAppOptions } from "./http/create-http-app.js";
export type { EventKind } from "./http/events-query-schema.js";
export type { ExecutionEventsOptions } from "./http/execution-event-stream.js";
export type { HttpErrorBody } from "./http/http-error.js";
export type { InterceptorMatchView, InterceptorView } from "./http/interceptor-routes.js";
export {
  type ActivityFailure,
  type ActivityPackage,
  type ActivitySource,
  type ActivityWarning,
  createLoaderActivity,
  type LoaderActivity,
  type LoaderActivityFeed,
  type LoaderActivityOptions,
} from "./http/loader-activity.js";
export type { PackageLoadErrors } from "./http/package-load-error-log.js";
export { parseApiKeys } from "./http/parse-api-keys.js";
export type { RuntimePoolView, RuntimeView } from "./http/sandbox-routes.js";
export type { LatestSkillView, SkillLoadErrorView, SkillOrigin, SkillView } from "./http/skill-view.js";
export {
  type RunningHttpServer,
  type StartHttpServerOptions,
  startHttpServer,
} from "./http/start-http-server.js";
export type { StudioOptions } from "./http/studio-routes.js";
export {
  createMcpHttpHandler,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_SESSIONS_PER_OWNER,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  type McpHttpHandler,
  type McpHttpHandlerOptions,
} from "./mcp/create-mcp-http-handler.js";
export { createMcpServer, type McpServerHandle, type McpServerOptions } from "./mcp/create-mcp-server.js";
export type { McpSessionEnd, McpSessionEndReason } from "./mcp/mcp-session-pool.js";
export { type McpStdioSession, serveMcpStdio } from "./mcp/serve-mcp-stdio.js";
export { SERVER_ERROR_CODES, type ServerErrorCode } from "./server-error-codes.js";
