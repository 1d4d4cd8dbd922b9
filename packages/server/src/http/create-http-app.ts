import type { SkillExecutor, SkillRegistry } from "@skillbox/core";
import { SkillboxError } from "@skillbox/core";
import { Hono } from "hono";
import type { A2aOptions } from "../a2a/a2a-options.js";
import { createA2aRoutes } from "../a2a/create-a2a-routes.js";
import { createAuthentication } from "./authenticate.js";
import { createCallerEventStreams } from "./caller-event-stream.js";
import { createCallerRoutes } from "./caller-routes.js";
import {
  type ExecutionEventsOptions,
  eventStreamSlotsOf,
  heartbeatIntervalOf,
} from "./execution-event-stream.js";
import { createExecutionRoutes } from "./execution-routes.js";
import type { HttpEnv } from "./http-env.js";
import { errorResponse, handleHttpError } from "./http-error.js";
import { createInterceptorRoutes } from "./interceptor-routes.js";
import { DEFAULT_MAX_BODY_BYTES, limitBody } from "./limit-body.js";
import type { ActivitySource } from "./loader-activity.js";
import { PackageLoadErrorLog } from "./package-load-error-log.js";
import { createSandboxRoutes } from "./sandbox-routes.js";
import { createSkillRoutes } from "./skill-routes.js";
import { createStatsRoutes } from "./stats-routes.js";
import { createStudioRoutes, type StudioOptions } from "./studio-routes.js";
import { traceHttpRequests } from "./trace-http-requests.js";

/** Options of {@link createHttpApp}. */
export interface HttpAppOptions {
  registry: SkillRegistry;
  executor: SkillExecutor;
  /**
   * API key → owner id; an owner written `"alice+approver"` makes the key an approver key of
   * `alice` (it may approve and reject her executions). Empty or undefined: no authentication,
   * every caller is the owner "public", and only connections from this machine may approve.
   */
  apiKeys?: Record<string, string>;
  /** Largest accepted request body in bytes (default 1 MiB); larger → 413. */
  maxBodyBytes?: number;
  /** Serves `/mcp` (MCP Streamable HTTP) for the authenticated owner; when absent, /mcp is 404. */
  mcp?: (request: Request, owner: string) => Promise<Response>;
  /**
   * Agent2Agent: the agent card at `/.well-known/agent-card.json` (no auth) and JSON-RPC at
   * `/a2a` (same authentication as the API). On by default; `false` turns it off.
   */
  a2a?: A2aOptions | false;
  /**
   * Bounds of the event streams, `GET /api/executions/:id/events` and `GET /api/events`
   * (heartbeat interval, streams per owner).
   */
  executionEvents?: ExecutionEventsOptions;
  /**
   * The loader's activity (loads, reloads, load errors, removals), streamed to callers by
   * `GET /api/events` as `activity` events; see `createLoaderActivity`. Without it, those
   * streams carry executions only.
   */
  activity?: ActivitySource;
  /**
   * Skillbox Studio, the web dashboard, under `/` (`index.html`, `assets/`): the build in
   * `directory` (default: the one `@skillbox/studio` ships), read once now. Without API keys it
   * answers only loopback host names, as the API; with keys the page loads without one and asks
   * for a key itself. No build there: `/` is 503 naming `pnpm build`. `false` turns it off.
   */
  studio?: StudioOptions | false;
}

/**
 * The Skillbox HTTP API as a Hono app: `GET /health`, `/api/skills`, `/api/executions`,
 * `GET /api/events` (a live stream of the caller's executions and the loader's activity),
 * `GET /api/caller`, `/api/stats/executions`, `/api/stats/durations`, `/api/sandbox`, A2A
 * (`/.well-known/agent-card.json`, `/a2a`) unless `options.a2a` is false and, when `options.mcp`
 * is given, `/mcp` — every route but `/health` and the agent card behind the same
 * authentication. Every error is `{ "error": { "code", "message", "data"? } }` with the status
 * its code maps to (A2A's JSON-RPC answers in its own error shape). Serve it with {@link startHttpServer} (`fetch: app.fetch`) or any Hono adapter.
 *
 * With an OpenTelemetry SDK installed, every request is a SERVER span `<METHOD> <route>` whose
 * parent is the request's W3C `traceparent`/`tracestate`, and the executions it starts are its
 * children; without one, nothing is traced and nothing is spent on it.
 */
export function createHttpApp(options: HttpAppOptions): Hono {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 0) {
    throw new SkillboxError(
      "SERVER_CONFIG_INVALID",
      `createHttpApp: \`maxBodyBytes\` must be a whole number of bytes, got ${maxBodyBytes}`,
    );
  }
  checkExecutionEvents(options.executionEvents);
  const authenticate = createAuthentication(options.apiKeys);
  const apiKeysConfigured = Object.keys(options.apiKeys ?? {}).length > 0;
  const limit = limitBody(maxBodyBytes);
  const { registry, executor, mcp } = options;

  const app = new Hono();
  // First, so every request is one span and everything after runs inside it.
  app.use(traceHttpRequests);
  app.onError(handleHttpError);
  app.notFound((context) =>
    errorResponse(context, {
      code: "NOT_FOUND",
      message: `No route ${context.req.method} ${context.req.path}; the API lives under /api/skills and /api/executions`,
    }),
  );

  app.get("/health", (context) => {
    let skills: number;
    try {
      skills = registry.list().length;
    } catch (error) {
      throw new SkillboxError("DATABASE_ERROR", "The skill registry cannot be read", { cause: error });
    }
    return context.json({ status: "ok", skills });
  });

  const api = new Hono<HttpEnv>();
  api.use(authenticate, limit);
  // The last load error of each package, for skill and interceptor views: read from the activity.
  const loadErrors =
    options.activity === undefined ? undefined : PackageLoadErrorLog.following(options.activity);
  api.route("/skills", createSkillRoutes({ registry, executor, loadErrors }));
  api.route("/interceptors", createInterceptorRoutes({ executor, loadErrors }));
  api.route("/caller", createCallerRoutes({ apiKeysConfigured }));
  api.route("/stats", createStatsRoutes({ executor }));
  api.route("/sandbox", createSandboxRoutes({ executor }));
  // One per-owner cap over both streaming routes.
  const streamSlots = eventStreamSlotsOf(options.executionEvents);
  api.route(
    "/executions",
    createExecutionRoutes({ executor, apiKeysConfigured, events: options.executionEvents, streamSlots }),
  );
  api.get(
    "/events",
    createCallerEventStreams({
      executor,
      activity: options.activity,
      slots: streamSlots,
      heartbeatIntervalMs: heartbeatIntervalOf(options.executionEvents),
    }),
  );
  app.route("/api", api);

  if (mcp !== undefined) {
    const mcpRoute = new Hono<HttpEnv>();
    mcpRoute.all("/", authenticate, limit, (context) => mcp(context.req.raw, context.get("owner")));
    app.route("/mcp", mcpRoute);
  }

  if (options.a2a !== false) {
    app.route(
      "/",
      createA2aRoutes({ ...options.a2a, registry, executor, authenticate, limit, apiKeysConfigured }),
    );
  }
  if (options.studio !== false) {
    // Last, so every route above keeps its paths; it answers only the files of the build.
    const studio = new Hono<HttpEnv>();
    const keylessGuard = apiKeysConfigured ? undefined : authenticate;
    const serveStudio = createStudioRoutes({ ...options.studio, keylessGuard });
    // Its own paths only, not `*`: another path is no Studio request (its span says no route matched).
    for (const path of ["/", "/index.html", "/assets/*"]) studio.get(path, serveStudio);
    app.route("/", studio);
  }
  return app;
}

function checkExecutionEvents(options: ExecutionEventsOptions | undefined): void {
  for (const [field, value] of Object.entries({
    heartbeatIntervalMs: options?.heartbeatIntervalMs,
    maxStreamsPerOwner: options?.maxStreamsPerOwner,
  })) {
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
      throw new SkillboxError(
        "SERVER_CONFIG_INVALID",
        `createHttpApp: \`executionEvents.${field}\` must be a positive whole number, got ${value}`,
      );
    }
  }
}
