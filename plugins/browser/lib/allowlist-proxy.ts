import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import {
  type AddressPolicy,
  AddressRefusedError,
  createGuardedLookup,
  type GuardedLookup,
} from "@skillbox/core/handler";
import type { HostAllowlist } from "./host-allowlist.js";

/** Options of {@link startAllowlistProxy}. */
export interface AllowlistProxyOptions {
  /** Which hosts may be reached at all. */
  allowlist: HostAllowlist;
  /** Which addresses: non-public ones only when listed (`SKILLBOX_BROWSER_ALLOW_PRIVATE`). */
  addressPolicy: AddressPolicy;
  /** Told each refused URL, and why. */
  onRefused?: (url: string, reason: "host" | "address") => void;
}

/** A running {@link startAllowlistProxy}. */
export interface AllowlistProxy {
  /** `http://127.0.0.1:<port>`, for Playwright's per-context `proxy.server`. */
  server: string;
  /** Stops listening and cuts every connection still open. */
  close(): Promise<void>;
}

/** Headers that describe one hop (browser → proxy), never forwarded to the next one. */
const HOP_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "upgrade",
]);

const REFUSAL = "Refused by the Skillbox browser host allowlist (SKILLBOX_BROWSER_ALLOWED_HOSTS)\n";
const ADDRESS_REFUSAL =
  "Refused by the Skillbox browser: the host has a loopback, private or other non-public address (allow it with SKILLBOX_BROWSER_ALLOW_PRIVATE)\n";

function forwardedHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const result: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HOP_HEADERS.has(name)) result[name] = value;
  }
  return result;
}

/** Response headers as a flat name/value list (keeps repeated ones such as Set-Cookie), minus hop headers. */
function responseHeaders(rawHeaders: string[]): string[] {
  const result: string[] = [];
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index] ?? "";
    if (!HOP_HEADERS.has(name.toLowerCase())) result.push(name, rawHeaders[index + 1] ?? "");
  }
  return result;
}

/** `[::1]` → `::1`: `net` and `http` want IPv6 addresses without brackets. */
function socketHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

function defaultPort(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

/**
 * Starts a forward proxy on 127.0.0.1 that lets through only what `allowlist` allows, to addresses
 * `addressPolicy` allows, and reports the rest to `onRefused`. Every request of a context using it
 * passes here, including each hop of a redirect (which Playwright's `route()` never sees) and
 * WebSocket tunnels: plain HTTP is forwarded after checking its URL, `CONNECT host:port` (https,
 * wss) after checking the host. Addresses are checked when connecting: IP literals directly, host
 * names on every address they resolve to, and the socket connects only to the checked addresses,
 * so `*` never reaches loopback or a private network unless `SKILLBOX_BROWSER_ALLOW_PRIVATE` says so.
 */
export async function startAllowlistProxy(options: AllowlistProxyOptions): Promise<AllowlistProxy> {
  const { allowlist, addressPolicy } = options;
  const onRefused = options.onRefused ?? (() => undefined);
  // Its AddressRefusedError is answered with a refusal instead of a 502.
  const lookup = createGuardedLookup(addressPolicy);
  const sockets = new Set<Duplex>();
  // Its own agent, so the upstream connections it keeps alive end with it.
  const agent = new Agent({ keepAlive: true });
  const track = (socket: Duplex) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };
  const server = createServer((request, response) => {
    let target: URL;
    try {
      target = new URL(request.url ?? "");
    } catch {
      response.writeHead(400, { "content-type": "text/plain" }).end("proxy requests need an absolute URL\n");
      return;
    }
    if (!allowlist.allows(target)) {
      onRefused(target.href, "host");
      response.writeHead(403, { "content-type": "text/plain" }).end(REFUSAL);
      return;
    }
    if (addressPolicy.checkLiteral(socketHost(target)) !== undefined) {
      onRefused(target.href, "address");
      response.writeHead(403, { "content-type": "text/plain" }).end(ADDRESS_REFUSAL);
      return;
    }
    const upstream = httpRequest(
      {
        agent,
        lookup,
        host: socketHost(target),
        port: defaultPort(target),
        method: request.method,
        path: `${target.pathname}${target.search}`,
        // The checked URL names the host; a different Host header would reach another virtual host there.
        headers: { ...forwardedHeaders(request.headers), host: target.host },
      },
      (upstreamResponse) => {
        try {
          response.writeHead(
            upstreamResponse.statusCode ?? 502,
            responseHeaders(upstreamResponse.rawHeaders),
          );
        } catch {
          // A status Node refuses to send (`HTTP/1.1 099`, say) must not throw out of this callback and take the host down.
          upstreamResponse.destroy();
          response.writeHead(502, { "content-type": "text/plain" }).end();
          return;
        }
        upstreamResponse.pipe(response);
      },
    );
    upstream.on("error", (error) => {
      const refused = error instanceof AddressRefusedError;
      if (refused) onRefused(target.href, "address");
      if (response.headersSent) response.destroy();
      else if (refused) response.writeHead(403, { "content-type": "text/plain" }).end(ADDRESS_REFUSAL);
      else response.writeHead(502, { "content-type": "text/plain" }).end();
    });
    response.on("close", () => upstream.destroy());
    request.pipe(upstream);
  });
  server.on("connection", track);
  server.on("connect", (request: IncomingMessage, client: Duplex, head: Buffer) => {
    tunnel(request.url ?? "", client, head, { allowlist, addressPolicy, onRefused, lookup }, track);
  });
  // Chromium tunnels WebSockets with CONNECT; an `Upgrade` sent in plain form is refused, not guessed at.
  server.on("upgrade", (_request: IncomingMessage, client: Duplex) => client.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    server: `http://127.0.0.1:${port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function tunnel(
  authority: string,
  client: Duplex,
  head: Buffer,
  guard: Required<AllowlistProxyOptions> & { lookup: GuardedLookup },
  track: (socket: Duplex) => void,
): void {
  const { allowlist, addressPolicy, onRefused, lookup } = guard;
  client.on("error", () => client.destroy());
  let target: URL;
  try {
    // The scheme only picks the default port; CONNECT always names one, so https is right for wss too.
    target = new URL(`https://${authority}`);
  } catch {
    client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
    return;
  }
  if (!allowlist.allows(target)) {
    onRefused(target.href, "host");
    client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\n${REFUSAL}`);
    return;
  }
  const refuseAddress = () => {
    onRefused(target.href, "address");
    client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\n${ADDRESS_REFUSAL}`);
  };
  if (addressPolicy.checkLiteral(socketHost(target)) !== undefined) {
    refuseAddress();
    return;
  }
  const upstream: Socket = connect({ port: defaultPort(target), host: socketHost(target), lookup }, () => {
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  track(upstream);
  upstream.on("error", (error) => {
    upstream.destroy();
    if (error instanceof AddressRefusedError) refuseAddress();
    else client.destroy();
  });
  client.on("close", () => upstream.destroy());
}
