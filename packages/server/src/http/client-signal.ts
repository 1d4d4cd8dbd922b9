import { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Context } from "hono";

const connectionSignals = new WeakMap<Socket, AbortSignal>();

/**
 * A signal aborted when the client of this request goes away.
 *
 * On @hono/node-server over HTTP/1 it belongs to the connection: an HTTP/1 client can only
 * abandon a request by closing its connection, which loses every response still owed on it.
 * One signal per keep-alive connection instead of one per request matters because creating an
 * AbortSignal costs several microseconds on Node 20 — a noticeable share of a whole execution.
 * Elsewhere (HTTP/2, other runtimes, `app.request()` in tests) it is the request's own signal.
 */
export function clientSignal(context: Context): AbortSignal {
  const incoming = (context.env as { incoming?: unknown } | undefined)?.incoming;
  if (!(incoming instanceof IncomingMessage)) return context.req.raw.signal;
  const socket = incoming.socket;
  let signal = connectionSignals.get(socket);
  if (signal === undefined) {
    const controller = new AbortController();
    signal = controller.signal;
    connectionSignals.set(socket, signal);
    socket.once("close", () => controller.abort(new Error("The client closed the connection")));
  }
  return signal;
}
