import { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { isLoopbackHostname } from "./is-loopback-hostname.js";

/**
 * True when the request's connection comes from this machine (its peer address is loopback).
 * Only @hono/node-server tells the address; elsewhere (other runtimes, `app.request()`) the
 * answer is false, the safe side for what it guards.
 */
export function isLoopbackPeer(context: Context): boolean {
  const incoming = (context.env as { incoming?: unknown } | undefined)?.incoming;
  if (!(incoming instanceof IncomingMessage)) return false;
  const address = incoming.socket.remoteAddress;
  return address !== undefined && isLoopbackHostname(address);
}
