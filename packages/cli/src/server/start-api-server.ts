import {
  type ActivitySource,
  createHttpApp,
  createMcpHttpHandler,
  parseApiKeys,
  startHttpServer,
} from "@skillbox/server";
import { CLI_VERSION } from "../cli-version.js";
import type { ResolvedConfig } from "../config/load-config.js";
import type { CliHost } from "../host/open-cli-host.js";
import { resolveApiKeys, type ServerAddress } from "./resolve-server-settings.js";

/** The HTTP API (with MCP at `/mcp`) as `skillbox dev` and `skillbox serve` run it. */
export interface ApiServer {
  /** Base URL, such as `http://127.0.0.1:3000`. */
  url: string;
  /** Whether requests must carry an API key. */
  apiKeysConfigured: boolean;
  /** Where Skillbox Studio answers (`<url>/`), or undefined when it is off (`--no-studio`, `studio: false`). */
  studioUrl: string | undefined;
  /**
   * Stops accepting requests, runs `drain` (where the executions in flight finish or are
   * cancelled), ends the MCP sessions (an open event stream would hold the server open), then
   * waits for the last requests.
   */
  close(drain?: () => Promise<void>): Promise<void>;
}

/** What the API server streams beyond the host's own state. */
export interface ApiServerSources {
  /** The loader's activity, streamed by `GET /api/events` (see `loaderActivitySource`). */
  activity?: ActivitySource;
}

/**
 * Starts the HTTP API over the host's registry and executor, with the MCP Streamable HTTP
 * handler mounted at `/mcp` and Skillbox Studio at `/` (unless `config.studio` is false), on
 * `address` (port 0 picks a free port; the URL says which).
 * Without API keys the server refuses a non-loopback host (`SERVER_UNSAFE_BIND`).
 */
export async function startApiServer(
  host: CliHost,
  config: ResolvedConfig,
  address: ServerAddress,
  sources: ApiServerSources = {},
): Promise<ApiServer> {
  const apiKeys = resolveApiKeys(config, parseApiKeys);
  const apiKeysConfigured = apiKeys !== undefined && Object.keys(apiKeys).length > 0;
  const mcp = createMcpHttpHandler({
    registry: host.registry,
    executor: host.executor,
    name: "skillbox",
    version: CLI_VERSION,
    ...config.server.mcp,
  });
  const app = createHttpApp({
    registry: host.registry,
    executor: host.executor,
    apiKeys,
    maxBodyBytes: config.server.maxBodyBytes,
    a2a: config.server.a2a,
    mcp: (request, owner) => mcp.handle(request, owner),
    activity: sources.activity,
    studio: config.studio ? {} : false,
  });
  let listening: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    listening = await startHttpServer({
      fetch: app.fetch,
      port: address.port,
      hostname: address.hostname,
      apiKeysConfigured,
    });
  } catch (error) {
    await mcp.close();
    throw error;
  }
  return {
    url: listening.url,
    apiKeysConfigured,
    studioUrl: config.studio ? `${listening.url}/` : undefined,
    async close(drain) {
      const closing = listening.close();
      try {
        await drain?.();
      } finally {
        await mcp.close();
        await closing;
      }
    },
  };
}
