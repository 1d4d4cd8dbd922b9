import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { isSkillboxError, type SkillExecution, type SkillExecutor, type SkillRegistry } from "@skillbox/core";
import { executionToToolResult, toolErrorResult } from "./execution-to-tool-result.js";
import { progressNotifier } from "./progress-notifier.js";
import { SERVER_PACKAGE_VERSION } from "./server-package-version.js";
import { ToolCatalog } from "./tool-catalog.js";
import { WRAPPED_INPUT_PROPERTY } from "./tool-input-schema.js";
import { traceToolCall } from "./trace-tool-call.js";

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  registry: SkillRegistry;
  executor: SkillExecutor;
  /** The caller's owner id: which skills are tools, and the apiKeyId of executions (default "public"). */
  owner?: string;
  /** Server name reported to clients (default "skillbox"). */
  name?: string;
  /** Server version reported to clients (default: the version of `@skillbox/server`). */
  version?: string;
}

/** What {@link createMcpServer} returns. */
export interface McpServerHandle {
  /**
   * The SDK's low-level `Server` (tools are JSON Schemas from the registry, not zod schemas, so
   * `McpServer` does not fit). Connect it to a transport with `server.connect(transport)`.
   */
  server: Server;
  /** Stops following the registry and closes the server's connection, if any. */
  close(): Promise<void>;
}

/**
 * An MCP server (SDK `Server`) whose tools are the enabled skills the owner may see, kept in
 * sync with the registry.
 *
 * - `tools/list`: one tool per skill name at its highest stable enabled version — what
 *   `execute(name)` runs — named by core's `createToolNameMap` (`github.issues` → `github_issues`,
 *   `@acme/weather` → `acme__weather`, a suffix only on a collision), with
 *   the skill's input schema (wrapped as `{ input }` when it admits no object, see
 *   `toolInputSchema`) and its output schema when that describes an object.
 * - `tools/call`: `executor.execute(name, arguments, { apiKeyId: owner, sessionId, signal })`,
 *   cancelled with the request. Success: the output as JSON text, plus `structuredContent` when
 *   an output schema was advertised. A failed execution, or one refused (`SKILL_DISABLED`, …),
 *   is a tool result with `isError: true` and the text `CODE: message`. An unknown tool name is
 *   a protocol error (`-32602`), as the spec says.
 * - A call with `_meta.progressToken` also passes `onProgress` to `execute()`: each
 *   `ctx.progress()` report becomes `notifications/progress` (`progress`, `total`,
 *   `message`; the execution id in `_meta`), and the client's `notifications/cancelled` cancels
 *   the execution.
 * - A skill that needs approval answers at once with a result saying so, its execution id in
 *   `_meta` (and in `structuredContent` when the tool has no output schema). Nothing on this
 *   server approves it: a person decides over the HTTP API or the CLI, never the model.
 * - `notifications/tools/list_changed` (capability `tools.listChanged`) once the owner's tool
 *   list really changed: hot reloads, enable/disable, registrations — by this process or, noticed
 *   within half a second, by another one. Bursts are compared once after 50 ms of quiet.
 *
 * - With an OpenTelemetry SDK installed, each `tools/call` is a SERVER span `tools/call <tool>`
 *   whose parent is the W3C trace context in `params._meta` (`traceparent`, `tracestate`), and
 *   the execution is its child (see `traceToolCall`).
 *
 * Call `close()` when done: it also releases the registry listener.
 */
export function createMcpServer(options: McpServerOptions): McpServerHandle {
  const catalog = new ToolCatalog(options.registry);
  return createCatalogServer(options, catalog, () => catalog.close());
}

/**
 * {@link createMcpServer} over a catalog shared with other servers (the HTTP handler has one
 * per handler, not one per session). `release` runs on close.
 *
 * @internal
 */
export function createCatalogServer(
  options: McpServerOptions,
  catalog: ToolCatalog,
  release?: () => void,
): McpServerHandle {
  const owner = options.owner ?? "public";
  const server = new Server(
    { name: options.name ?? "skillbox", version: options.version ?? SERVER_PACKAGE_VERSION },
    { capabilities: { tools: { listChanged: true } } },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: catalog.snapshot(owner).tools.map((entry) => entry.tool),
  }));

  const callTool = async (
    request: CallToolRequest,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ): Promise<CallToolResult> => {
    const entry = catalog.snapshot(owner).byToolName.get(request.params.name);
    if (entry === undefined) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool: ${request.params.name} (tools/list names the tools of owner "${owner}")`,
      );
    }
    const argumentsObject = request.params.arguments ?? {};
    const input = entry.wrapsInput ? argumentsObject[WRAPPED_INPUT_PROPERTY] : argumentsObject;
    const session = extra.sessionId === undefined ? {} : { sessionId: extra.sessionId };
    const progressToken = request.params._meta?.progressToken;
    let execution: SkillExecution;
    try {
      // The catalog resolved it (and drops its snapshot on every registry change): not again.
      execution = await options.executor.execute(entry.skill, input, {
        apiKeyId: owner,
        ...session,
        signal: extra.signal,
        ...(progressToken === undefined
          ? {}
          : { onProgress: progressNotifier(progressToken, extra.sendNotification) }),
      });
    } catch (error) {
      // Refusals before the run (SKILL_DISABLED after a race with a disable, BUSY while closing)
      // are the model's business; anything else is a fault of the server.
      if (isSkillboxError(error)) return toolErrorResult(error.code, error.message);
      throw error;
    }
    return executionToToolResult(execution, entry);
  };
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    traceToolCall(request, extra, () => callTool(request, extra)),
  );

  const unsubscribe = catalog.subscribe(owner, () => {
    // Before `initialize` the client has not listed anything yet; after a disconnect nobody listens.
    if (server.transport === undefined || server.getClientCapabilities() === undefined) return;
    server.sendToolListChanged().catch(() => {
      // The connection closed between the check and the send: the next client lists afresh.
    });
  });

  let closed = false;
  let closing: Promise<void> = Promise.resolve();
  return {
    server,
    close() {
      // Closing the server closes its transport, whose close handlers may call back here.
      if (!closed) {
        closed = true;
        unsubscribe();
        release?.();
        closing = server.close();
      }
      return closing;
    },
  };
}
