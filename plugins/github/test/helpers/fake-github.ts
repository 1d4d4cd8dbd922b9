import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the fake server received, for asserting headers and paths. */
export interface RecordedRequest {
  method: string;
  /** Path and query as sent, e.g. `/repos/octo/demo/issues?state=open&per_page=30`. */
  path: string;
  headers: IncomingHttpHeaders;
}

/** Answers one path (matched on the pathname, after the base path is removed). */
export type FakeRoute = (
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
) => void | Promise<void>;

/** A GitHub-shaped HTTP server on 127.0.0.1. */
export interface FakeGithub {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** What `apiUrl` should be set to: the origin plus the base path (`/api/v3` for Enterprise). */
  apiUrl: string;
  requests: RecordedRequest[];
  route(path: string, handler: FakeRoute): void;
  close(): Promise<void>;
}

/** Writes a JSON answer. */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = body === undefined ? "" : JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  response.end(text);
}

/**
 * Starts the fake. Unknown paths get GitHub's 404 body. Every request is recorded before its
 * route runs, so tests can assert on requests whose answer never came (timeouts).
 */
export async function startFakeGithub(options: { basePath?: string } = {}): Promise<FakeGithub> {
  const basePath = options.basePath ?? "";
  const routes = new Map<string, FakeRoute>();
  const requests: RecordedRequest[] = [];
  const server = createServer((request, response) => {
    requests.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers });
    const url = new URL(request.url ?? "/", `http://${request.headers.host}`);
    const route = url.pathname.startsWith(basePath)
      ? routes.get(url.pathname.slice(basePath.length))
      : undefined;
    if (route === undefined) {
      sendJson(response, 404, { message: "Not Found", documentation_url: "https://docs.github.com/rest" });
      return;
    }
    Promise.resolve(route(request, response, url)).catch((error: unknown) => {
      sendJson(response, 500, { message: `fake route failed: ${String(error)}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    apiUrl: `${origin}${basePath}`,
    requests,
    route(path, handler) {
      routes.set(path, handler);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Serves `body` with an ETag, answering 304 to a matching `If-None-Match` as GitHub does. */
export function serveJson(fake: FakeGithub, path: string, body: unknown, etag = '"v1"'): void {
  fake.route(path, (request, response) => {
    if (request.headers["if-none-match"] === etag) {
      response.writeHead(304, { etag });
      response.end();
      return;
    }
    sendJson(response, 200, body, { etag });
  });
}

/**
 * Serves `items` as GitHub paginates them: `per_page` (default 30) and `page` query parameters, a
 * `Link` header with absolute `next`/`last` URLs, an ETag per page. `linkOrigin` overrides the
 * origin written into the links (to test that a foreign one is refused).
 */
export function serveList(fake: FakeGithub, path: string, items: unknown[], linkOrigin?: string): void {
  fake.route(path, (request, response, url) => {
    const perPage = Number(url.searchParams.get("per_page") ?? 30);
    const page = Number(url.searchParams.get("page") ?? 1);
    const lastPage = Math.max(1, Math.ceil(items.length / perPage));
    const pageUrl = (number: number) => {
      const target = new URL(url.pathname + url.search, linkOrigin ?? fake.origin);
      target.searchParams.set("page", String(number));
      return target.href;
    };
    const links =
      page < lastPage ? [`<${pageUrl(page + 1)}>; rel="next"`, `<${pageUrl(lastPage)}>; rel="last"`] : [];
    const etag = `"page-${page}-${perPage}"`;
    if (request.headers["if-none-match"] === etag) {
      response.writeHead(304, { etag, ...(links.length > 0 ? { link: links.join(", ") } : {}) });
      response.end();
      return;
    }
    const headers: Record<string, string> = { etag };
    if (links.length > 0) headers.link = links.join(", ");
    sendJson(response, 200, items.slice((page - 1) * perPage, page * perPage), headers);
  });
}
