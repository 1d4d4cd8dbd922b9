import { Hono } from "hono";
import type { HttpEnv } from "./http-env.js";
import { readQuery } from "./request-schemas.js";
import { emptyQuerySchema } from "./studio-query-schemas.js";

/** Options of {@link createCallerRoutes}. */
export interface CallerRoutesOptions {
  /** Whether the server was given API keys (without them every caller is `public`). */
  apiKeysConfigured: boolean;
}

/** `GET /api/caller`: who the request acts as. */
export interface CallerView {
  /** The owner id the caller acts as: its API key's owner, or `public` without keys. */
  owner: string;
  /** Whether it may approve and reject its owner's executions. */
  approver: boolean;
  /** Whether the server requires API keys. */
  apiKeysConfigured: boolean;
}

/**
 * `GET /api/caller`: the owner the caller's key acts as, whether it may decide approvals, and
 * whether the server has API keys at all — what a client shows and asks for before anything else.
 * Behind the same authentication as the rest of the API, so a wrong key gets its 401 here.
 */
export function createCallerRoutes({ apiKeysConfigured }: CallerRoutesOptions): Hono<HttpEnv> {
  const routes = new Hono<HttpEnv>();
  routes.get("/", (context) => {
    readQuery(context, emptyQuerySchema);
    const view: CallerView = {
      owner: context.get("owner"),
      approver: context.get("approver"),
      apiKeysConfigured,
    };
    return context.json(view);
  });
  return routes;
}
