import { studioAssetsDirectory } from "@skillbox/studio";
import type { Context, MiddlewareHandler } from "hono";
import type { HttpEnv } from "./http-env.js";
import { readStudioFiles, type StudioFile } from "./studio-files.js";

/** The `studio` option of `createHttpApp`: where the built Studio is. */
export interface StudioOptions {
  /** The folder of the build (`index.html` and `assets/`); default `@skillbox/studio`'s `studioAssetsDirectory`. */
  directory?: string;
}

/** Options of {@link createStudioRoutes}. */
export interface StudioRoutesOptions extends StudioOptions {
  /**
   * The API's authentication, applied only when the server has no API keys: then it refuses a
   * foreign Host (DNS rebinding), as for the API. With keys the page loads without one — it
   * holds no data and asks for a key itself; every request it makes goes through the API's check.
   */
  keylessGuard?: MiddlewareHandler<HttpEnv>;
}

/**
 * Headers of every Studio answer. The build loads only its own script and stylesheet and talks
 * only to this origin, so nothing else is allowed: an injected script or a framing page gets nowhere.
 */
const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
};

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Skillbox Studio is not built</title></head>
<body><h1>Skillbox Studio is not built</h1>
<p>This server found no Studio build (no <code>index.html</code> in its Studio folder).
Run <code>pnpm build</code> in the Skillbox repository (it builds <code>packages/studio/dist/app</code>), then restart the server.
The HTTP API is under <a href="/api/skills">/api</a>.</p></body></html>
`;

/**
 * The Studio as a GET middleware (HEAD included) for every path: the files of the build, read
 * once now (see `readStudioFiles`), `/` answering `index.html`; any other path passes on to the
 * routes after it and, at last, the API's 404. Answers gzip when `Accept-Encoding` allows it,
 * 304 to a matching `If-None-Match`, and without a build (no `index.html`) 503 at `/` with a page
 * naming `pnpm build` — a library user without a build gets no crash.
 */
export function createStudioRoutes(options: StudioRoutesOptions = {}): MiddlewareHandler<HttpEnv> {
  const files = readStudioFiles(options.directory ?? studioAssetsDirectory);
  const guard = options.keylessGuard;
  return async (context, next) => {
    const path = context.req.path === "/" ? "/index.html" : context.req.path;
    const file = files?.get(path);
    if (file === undefined && (files !== undefined || path !== "/index.html")) return next();
    const serve = () => (file === undefined ? notBuilt() : answer(context, file));
    let response: Response | undefined;
    if (guard === undefined) response = serve();
    else {
      const refused = await guard(context, async () => {
        response = serve();
      });
      if (refused instanceof Response) response = refused;
    }
    // The guard always answers or calls on; the fallback only satisfies the type.
    response ??= notBuilt();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.headers.set(name, value);
    return response;
  };
}

function notBuilt(): Response {
  return new Response(NOT_BUILT_PAGE, {
    status: 503,
    headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" },
  });
}

function answer(context: Context, file: StudioFile): Response {
  const representation =
    file.gzip !== undefined && acceptsGzip(context.req.header("accept-encoding")) ? file.gzip : file.identity;
  const headers: Record<string, string> = {
    "Cache-Control": file.cacheControl,
    ETag: representation.etag,
    // Caches must key on it: the same URL answers gzipped bytes to some clients, plain to others.
    Vary: "Accept-Encoding",
  };
  if (matches(context.req.header("if-none-match"), representation.etag)) {
    return new Response(null, { status: 304, headers });
  }
  headers["Content-Type"] = file.contentType;
  headers["Content-Length"] = String(representation.body.byteLength);
  if (representation === file.gzip) headers["Content-Encoding"] = "gzip";
  return new Response(representation.body, { status: 200, headers });
}

/** Whether `Accept-Encoding` allows gzip: listed (or `*`) with a quality above 0, and not refused by name. */
function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  let star = false;
  for (const part of header.split(",")) {
    const [coding = "", ...parameters] = part.split(";").map((piece) => piece.trim().toLowerCase());
    const quality = parameters.find((parameter) => parameter.startsWith("q="));
    const allowed = quality === undefined || Number(quality.slice(2)) > 0;
    if (coding === "gzip" || coding === "x-gzip") return allowed;
    if (coding === "*") star = allowed;
  }
  return star;
}

/** `If-None-Match` compares weakly (RFC 9110 §13.1.2): `W/` is ignored, `*` matches any. */
function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header
    .split(",")
    .map((tag) => tag.trim().replace(/^W\//, ""))
    .some((tag) => tag === "*" || tag === etag);
}
