import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { errorResponse } from "./http-error.js";

/** 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * Hono's `bodyLimit`, answering 413 in the API's error shape. A request without
 * `Transfer-Encoding` is judged by its `Content-Length` alone (Node's parser never reads past
 * it), and one with neither header has no body: only chunked bodies go through `bodyLimit`,
 * which has to touch `request.body` — on @hono/node-server that turns the lazy request into a
 * full web `Request` and a stream, a cost every small JSON call would pay otherwise.
 */
export function limitBody(maxBytes: number): MiddlewareHandler {
  const tooLarge = (context: Parameters<MiddlewareHandler>[0]) =>
    errorResponse(context, {
      code: "BODY_TOO_LARGE",
      message: `The request body is larger than this server accepts (${maxBytes} bytes)`,
      data: { maxBytes },
    });
  const streamed = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  return async (context, next) => {
    if (context.req.header("transfer-encoding") !== undefined) return streamed(context, next);
    const length = context.req.header("content-length");
    if (length !== undefined && Number(length) > maxBytes) return tooLarge(context);
    await next();
  };
}
