import { defineErrorCodes, type ErrorCodeOf } from "@skillbox/core";

/**
 * The error codes the HTTP API, the MCP server and the A2A agent raise on top of core's, each
 * with its one line of documentation. They answer requests and refuse configurations; none of
 * them ends an execution. The HTTP status of each is in `http-error.ts`.
 */
export const SERVER_ERROR_CODES = defineErrorCodes({
  API_KEYS_INVALID: {
    description:
      "An API key entry (`SKILLBOX_API_KEYS` as `key:owner,…` or `key:owner+approver,…`, or the `apiKeys` option) is malformed, empty or repeated.",
  },
  AUTH_REQUIRED: {
    description: "The server has API keys and the request sent none: send `Authorization: Bearer <key>`.",
  },
  AUTH_INVALID: {
    description: "The `Authorization` header is not `Bearer <key>`, or the key is not one the server knows.",
  },
  FORBIDDEN: {
    description:
      "The caller may see the skill but does not own it, so it may not enable, disable or delete it; or a key without the approver role (`owner+approver`) approves or rejects an execution (without keys: a peer that is not loopback).",
  },
  HOST_NOT_ALLOWED: {
    description: "A server without API keys answers only requests addressed to a loopback host name.",
  },
  NOT_FOUND: {
    description: "No route matches the request, or a folder a CLI command names does not exist.",
  },
  REQUEST_INVALID: {
    description: "The request's body, query or path is malformed; the message names the field.",
  },
  BODY_TOO_LARGE: { description: "The request body is larger than the server's `maxBodyBytes`." },
  CONTENT_TYPE_INVALID: {
    description: "A request body is not sent as JSON (`Content-Type: application/json`).",
  },
  SERVER_CONFIG_INVALID: {
    description: "A server option (body limit, MCP session limits, A2A task store bounds) is malformed.",
  },
  SERVER_LISTEN_FAILED: {
    description:
      "The server cannot listen on the host and port (a port out of range, taken, or not this machine's).",
  },
  SERVER_UNSAFE_BIND: {
    description: "Without API keys the server refuses to listen on a host name other machines can reach.",
  },
  INTERNAL_ERROR: {
    description: "The server failed in a way that is not the caller's doing; its log has the details.",
  },
});

/** The error codes of `@skillbox/server` (see {@link SERVER_ERROR_CODES}). */
export type ServerErrorCode = ErrorCodeOf<typeof SERVER_ERROR_CODES>;
