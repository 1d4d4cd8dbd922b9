import { hash } from "node:crypto";
import { SkillboxError } from "@skillbox/core";
import type { MiddlewareHandler } from "hono";
import type { HttpEnv } from "./http-env.js";
import { errorResponse } from "./http-error.js";
import { isLoopbackHostname } from "./is-loopback-hostname.js";
import { isLoopbackPeer } from "./is-loopback-peer.js";
import { type ApiKeyGrant, readApiKeyGrant } from "./read-api-key-grant.js";

/** The owner every caller acts as when no API keys are configured. */
const ANONYMOUS_OWNER = "public";

const CHALLENGE = 'Bearer realm="skillbox"';

/**
 * Builds the middleware that puts the caller's owner id, and whether it may decide approvals,
 * on the context.
 *
 * With keys: `Authorization: Bearer <key>` is required and the key's owner becomes the caller;
 * the key is an approver when its owner was given as `owner+approver`. Keys are looked up by
 * their SHA-256 digest, so how long a lookup takes does not depend on how much of a guessed key
 * matches a real one.
 *
 * Without keys: every caller is `public`, and only requests addressed to a loopback host name
 * are served — a web page the user visits could otherwise reach this unauthenticated server
 * through a DNS name it rebinds to 127.0.0.1. Approving is further limited to connections that
 * come from this machine (a loopback peer address): a Host header is the client's to choose, a
 * peer address is not, so a keyless server exposed through a port forward cannot be approved
 * from elsewhere.
 */
export function createAuthentication(
  apiKeys: Record<string, string> | undefined,
): MiddlewareHandler<HttpEnv> {
  const owners = digestKeys(apiKeys ?? {});
  if (owners.size === 0) {
    return async (context, next) => {
      const host = context.req.header("host");
      if (host !== undefined && !isLoopbackHostname(hostOf(host))) {
        return errorResponse(context, {
          code: "HOST_NOT_ALLOWED",
          message:
            `This server has no API keys, so it only answers requests addressed to localhost, not "${host}"; ` +
            'configure API keys (SKILLBOX_API_KEYS="key:owner") to serve other host names',
        });
      }
      context.set("owner", ANONYMOUS_OWNER);
      context.set("approver", isLoopbackPeer(context));
      await next();
    };
  }
  return async (context, next) => {
    const header = context.req.header("authorization");
    if (header === undefined || header.trim() === "") {
      return errorResponse(
        context,
        {
          code: "AUTH_REQUIRED",
          message: "This server requires an API key: send the header `Authorization: Bearer <key>`",
        },
        { "WWW-Authenticate": CHALLENGE },
      );
    }
    const match = /^Bearer +(\S+) *$/i.exec(header);
    const grant = match?.[1] === undefined ? undefined : owners.get(digest(match[1]));
    if (grant === undefined) {
      return errorResponse(
        context,
        {
          code: "AUTH_INVALID",
          message:
            match === null
              ? "The Authorization header must have the form `Bearer <key>`"
              : "The API key is not one this server knows; check the key the server was configured with",
        },
        { "WWW-Authenticate": `${CHALLENGE}, error="invalid_token"` },
      );
    }
    context.set("owner", grant.owner);
    context.set("approver", grant.approver);
    await next();
  };
}

function digestKeys(apiKeys: Record<string, string>): Map<string, ApiKeyGrant> {
  const owners = new Map<string, ApiKeyGrant>();
  for (const [key, owner] of Object.entries(apiKeys)) {
    const grant = typeof owner === "string" ? readApiKeyGrant(owner) : undefined;
    if (key.trim() === "" || grant === undefined || grant.owner.trim() === "") {
      throw new SkillboxError(
        "API_KEYS_INVALID",
        'createHttpApp: every entry of `apiKeys` needs a non-empty key and a non-empty owner id ("owner" or "owner+approver")',
      );
    }
    owners.set(digest(key), grant);
  }
  return owners;
}

function digest(key: string): string {
  return hash("sha256", key, "base64");
}

/** The host name of a Host header value, without the port. */
function hostOf(host: string): string {
  const trimmed = host.trim();
  if (trimmed.startsWith("[")) return trimmed.slice(0, trimmed.indexOf("]") + 1);
  const colon = trimmed.indexOf(":");
  return colon === -1 ? trimmed : trimmed.slice(0, colon);
}
