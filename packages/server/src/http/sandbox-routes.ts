import type { SkillExecutor } from "@skillbox/core";
import { Hono } from "hono";
import type { HttpEnv } from "./http-env.js";
import { readQuery } from "./request-schemas.js";
import { emptyQuerySchema } from "./studio-query-schemas.js";

/** Options of {@link createSandboxRoutes}. */
export interface SandboxRoutesOptions {
  executor: SkillExecutor;
}

/** One pool of a runtime in `GET /api/sandbox`. */
export interface RuntimePoolView {
  /** What it serves: `threads` (worker threads), `echo@1.0.0` (warm sandboxes of a skill version). */
  name: string;
  size: number;
  idle: number;
  /** Threads running a task; for warm sandboxes, those still starting. */
  busy: number;
  max: number | null;
}

/** A runtime in `GET /api/sandbox`. */
export interface RuntimeView {
  /** The name skills give as their `runtime` (`inline`, `worker`, `container`). */
  name: string;
  /** Its settings and counts (`engine`, `engineVersion`, `image`, `network`, limits, threads…). */
  details: Record<string, string | number | boolean | null>;
  /** Its pools; empty when it keeps none. */
  pools: RuntimePoolView[];
}

/**
 * `GET /api/sandbox`: `{ runtimes }`, each runtime of the executor as its `describe()` tells it
 * (see `SkillExecutor.describeRuntimes`), with only the warm pools of skills the caller can see.
 * Runtimes name no secrets and no host paths; reading this spawns nothing.
 */
export function createSandboxRoutes({ executor }: SandboxRoutesOptions): Hono<HttpEnv> {
  const routes = new Hono<HttpEnv>();
  routes.get("/", (context) => {
    readQuery(context, emptyQuerySchema);
    const runtimes: RuntimeView[] = executor
      .describeRuntimes({ owner: context.get("owner") })
      .map(({ name, details, pools }) => ({
        name,
        details,
        // The skill id is how visibility was decided; the pool's name says which skill it is.
        pools: pools.map(({ name: pool, size, idle, busy, max }) => ({ name: pool, size, idle, busy, max })),
      }));
    return context.json({ runtimes });
  });
  return routes;
}
