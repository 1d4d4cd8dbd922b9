import { basename } from "node:path";
import type { Interceptor, SkillExecutor } from "@skillbox/core";
import { Hono } from "hono";
import type { HttpEnv } from "./http-env.js";
import type { PackageLoadErrors } from "./package-load-error-log.js";
import { readQuery } from "./request-schemas.js";
import { emptyQuerySchema } from "./studio-query-schemas.js";

/** Options of {@link createInterceptorRoutes}. */
export interface InterceptorRoutesOptions {
  executor: SkillExecutor;
  /** Where interceptor plugins' folders and load errors are known (a `PackageLoadErrorLog`). */
  loadErrors?: PackageLoadErrors;
}

/** Which skills an interceptor applies to, as `GET /api/interceptors` shows it. */
export interface InterceptorMatchView {
  /** `all`: no `match`; `filter`: name globs and/or tags (all given conditions hold); `predicate`: code decides. */
  kind: "all" | "filter" | "predicate";
  /** Name globs (any of them), null when not filtered by name. */
  names: string[] | null;
  /** Tags (any of them), null when not filtered by tag. */
  tags: string[] | null;
}

/** An active interceptor as `GET /api/interceptors` shows it. */
export interface InterceptorView {
  name: string;
  /** Its `order` (default 0): lower runs first on the way in, last on the way out. */
  order: number;
  match: InterceptorMatchView;
  /** The hooks it has, in the order an execution meets them. */
  hooks: string[];
  /** `package`: an interceptor plugin a loader loaded (its folder's name); `code`: added by code. */
  source: { kind: "package" | "code"; package: string | null };
  /**
   * The plugin's last failed load (it is stood in for by a fail-closed interceptor, or its last
   * good version keeps running): code, message and when; null when none is known.
   */
  lastLoadError: { code: string; message: string; at: string } | null;
}

const HOOKS = ["before", "after", "onError", "audit", "onFinish"] as const;

/**
 * `GET /api/interceptors`: the executor's active interceptors in `before` order (ascending
 * `order`, ties in registration order). Interceptors apply to every owner's executions, so every
 * authenticated caller sees the same list; it names no host paths.
 */
export function createInterceptorRoutes({ executor, loadErrors }: InterceptorRoutesOptions): Hono<HttpEnv> {
  const routes = new Hono<HttpEnv>();
  routes.get("/", (context) => {
    readQuery(context, emptyQuerySchema);
    const interceptors = executor.interceptors.list().map((interceptor) => viewOf(interceptor, loadErrors));
    return context.json({ interceptors });
  });
  return routes;
}

function viewOf(interceptor: Interceptor, loadErrors: PackageLoadErrors | undefined): InterceptorView {
  const root = loadErrors?.interceptorPackage(interceptor.name);
  const failure = root === undefined ? undefined : loadErrors?.lastLoadError(root);
  return {
    name: interceptor.name,
    order: interceptor.order ?? 0,
    match: matchOf(interceptor.match),
    hooks: HOOKS.filter((hook) => typeof interceptor[hook] === "function"),
    source:
      root === undefined ? { kind: "code", package: null } : { kind: "package", package: basename(root) },
    lastLoadError:
      failure === undefined
        ? null
        : {
            code: failure.code,
            message: failure.message.split(failure.root).join(basename(failure.root)),
            at: new Date(failure.at).toISOString(),
          },
  };
}

function matchOf(match: Interceptor["match"]): InterceptorMatchView {
  if (match === undefined) return { kind: "all", names: null, tags: null };
  if (typeof match === "function") return { kind: "predicate", names: null, tags: null };
  const names = match.names === undefined ? null : Array.isArray(match.names) ? match.names : [match.names];
  return {
    kind: "filter",
    names: names === null ? null : [...names],
    tags: match.tags ? [...match.tags] : null,
  };
}
