import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** Answers one path of a {@link PageServer}. */
export type PageHandler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

/** A real HTTP server on loopback serving test pages; it records every request it receives. */
export interface PageServer {
  /** `127.0.0.1:<port>`, the form the host allowlist takes. */
  host: string;
  origin: string;
  /** Absolute URL of `path` on this server. */
  url(path?: string): string;
  /** `METHOD /path` of every request received, in order (`UPGRADE /path` for WebSockets). */
  requests: string[];
  /** Requests whose client went away before the response ended (the browser closed the page). */
  abandoned: string[];
  close(): Promise<void>;
}

/**
 * Serves `text/html` pages: a string is sent as the page, a function answers by itself; anything
 * else is 404. `address` is the loopback address to listen on (default 127.0.0.1).
 */
export async function startPageServer(
  pages: Record<string, string | PageHandler>,
  address = "127.0.0.1",
): Promise<PageServer> {
  const requests: string[] = [];
  const abandoned: string[] = [];
  const server = createServer((request, response) => {
    const line = `${request.method} ${request.url}`;
    requests.push(line);
    response.on("close", () => {
      if (!response.writableEnded) abandoned.push(line);
    });
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    const page = pages[path];
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (typeof page === "function") return page(request, response, Buffer.concat(chunks).toString("utf8"));
      if (page === undefined) {
        response.writeHead(404, { "content-type": "text/plain" }).end("not found");
        return;
      }
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
    });
  });
  // WebSocket handshakes arrive as `upgrade`, not `request`: record them too, then hang up.
  server.on("upgrade", (request, socket) => {
    requests.push(`UPGRADE ${request.url}`);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://${address}:${port}`;
  return {
    host: `${address}:${port}`,
    origin,
    url: (path = "/") => `${origin}${path}`,
    requests,
    abandoned,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
