import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer, type Http2Bindings, type HttpBindings } from "@hono/node-server";
import { SkillboxError } from "@skillbox/core";
import { isLoopbackHostname } from "./is-loopback-hostname.js";

/** Options of {@link startHttpServer}. */
export interface StartHttpServerOptions {
  /**
   * Answers a request, for example `createHttpApp(...).fetch`. Pass it on as it is: its second
   * argument carries the Node request and response (`incoming`, `outgoing`), which is how the
   * app learns the connection's peer address (who may approve without keys) and when the client
   * went away. A wrapper that drops it leaves the app without either.
   */
  fetch: (request: Request, bindings: HttpBindings | Http2Bindings) => Response | Promise<Response>;
  /** Default 3000; 0 picks a free port. */
  port?: number;
  /** Default "127.0.0.1". */
  hostname?: string;
  /** Whether API keys are configured: without them, a non-loopback hostname is refused (SkillboxError code "SERVER_UNSAFE_BIND" with a message naming the fix). */
  apiKeysConfigured: boolean;
}

/** A listening server. */
export interface RunningHttpServer {
  /** Base URL such as `http://127.0.0.1:3000` (no trailing slash). */
  url: string;
  /** The port listened on (the one picked when `port` was 0). */
  port: number;
  hostname: string;
  /** Stops accepting connections, lets requests in flight finish, then resolves. Idempotent. */
  close(): Promise<void>;
}

/** How often idle keep-alive connections are closed while a close waits for requests in flight. */
const CLOSE_SWEEP_MS = 25;

/**
 * Serves `fetch` (for example `createHttpApp(...).fetch`) over Node's HTTP server. Refuses a
 * hostname other machines can reach unless API keys are configured (`SERVER_UNSAFE_BIND`), and
 * reports a port that cannot be taken as `SERVER_LISTEN_FAILED`.
 */
export async function startHttpServer(options: StartHttpServerOptions): Promise<RunningHttpServer> {
  const hostname = options.hostname ?? "127.0.0.1";
  const port = options.port ?? 3000;
  if (!options.apiKeysConfigured && !isLoopbackHostname(hostname)) {
    throw new SkillboxError(
      "SERVER_UNSAFE_BIND",
      `Refusing to listen on ${hostname} without API keys: anyone who can reach it could run and change skills. ` +
        'Configure API keys (SKILLBOX_API_KEYS="key:owner,…") or listen on 127.0.0.1.',
      { data: { hostname } },
    );
  }
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new SkillboxError(
      "SERVER_LISTEN_FAILED",
      `The port must be a whole number from 0 to 65535 (0 picks a free one), got ${port}`,
    );
  }
  const server = createAdaptorServer({ fetch: options.fetch }) as Server;
  await listen(server, port, hostname);
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" || hostname.includes(":") ? `[${address.address}]` : hostname;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    hostname,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        // A keep-alive connection that turns idle after close() would otherwise linger until its
        // keep-alive timeout (5 s): sweep idle ones until the last request in flight is done.
        const sweep = setInterval(() => server.closeIdleConnections(), CLOSE_SWEEP_MS);
        server.close((error) => {
          clearInterval(sweep);
          if (error === undefined) resolve();
          else reject(error);
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}

function listen(server: Server, port: number, hostname: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const reason =
        error.code === "EADDRINUSE"
          ? `port ${port} is already in use; stop the other server or pick another port (0 picks a free one)`
          : error.code === "EACCES"
            ? `permission denied; ports below 1024 need privileges, pick a higher one`
            : error.code === "EADDRNOTAVAIL" || error.code === "ENOTFOUND"
              ? `${hostname} is not an address of this machine`
              : error.message;
      reject(
        new SkillboxError("SERVER_LISTEN_FAILED", `Cannot listen on ${hostname}:${port}: ${reason}`, {
          cause: error,
          data: { hostname, port, reason: error.code },
        }),
      );
    };
    server.once("error", onError);
    server.listen(port, hostname, () => {
      server.off("error", onError);
      resolve();
    });
  });
}
