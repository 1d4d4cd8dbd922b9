import { isSkillboxError, SkillboxError, toCallerError } from "@skillbox/core";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** The one error body every route answers with. */
export interface HttpErrorBody {
  error: { code: string; message: string; data?: unknown };
}

/**
 * The HTTP status of each error code the API answers with. Codes not listed are server faults
 * (500). The execution outcomes that are recorded (a handler's error, a timeout, a denial) are
 * not here: they are answered with the record and 200.
 */
const STATUS_BY_CODE: Record<string, ContentfulStatusCode> = {
  REQUEST_INVALID: 400,
  SKILL_REFERENCE_INVALID: 400,
  AUTH_REQUIRED: 401,
  AUTH_INVALID: 401,
  FORBIDDEN: 403,
  HOST_NOT_ALLOWED: 403,
  NOT_FOUND: 404,
  SKILL_NOT_FOUND: 404,
  EXECUTION_NOT_FOUND: 404,
  SKILL_DISABLED: 409,
  IDEMPOTENCY_CONFLICT: 409,
  BODY_TOO_LARGE: 413,
  CONTENT_TYPE_INVALID: 415,
  INPUT_INVALID: 422,
  RATE_LIMITED: 429,
  BUSY: 503,
  // Thrown (not recorded) only by a repeat of an idempotency key that gave up waiting for the
  // first execution, still running after every timeout its skill allows: retry later.
  TIMEOUT: 504,
  INTERCEPTOR_UNAVAILABLE: 503,
  DATABASE_ERROR: 503,
};

/** The status for an error code: 500 for codes that do not describe a client mistake. */
function statusForCode(code: string): ContentfulStatusCode {
  return STATUS_BY_CODE[code] ?? 500;
}

/**
 * Answers with the error shape and the status its code maps to. The error goes through core's
 * `toCallerError`, the one caller view every front shares: host-only details (stacks) stay in
 * the audit trail and the log.
 */
export function errorResponse(
  context: Context,
  error: { code: string; message: string; data?: unknown },
  headers?: Record<string, string>,
): Response {
  const body: HttpErrorBody = { error: toCallerError(error) };
  return context.json(body, statusForCode(error.code), headers);
}

/**
 * Turns anything a route threw into the error shape. Skillbox errors carry messages written for
 * the caller and are passed on; anything else is a bug whose message may expose internals, so
 * the caller gets a generic message and the server's stderr gets the details.
 */
export function handleHttpError(error: unknown, context: Context): Response {
  if (isSkillboxError(error)) return errorResponse(context, error);
  if (error instanceof HTTPException) {
    const code = error.status === 413 ? "BODY_TOO_LARGE" : error.status === 400 ? "REQUEST_INVALID" : "";
    if (code !== "") return errorResponse(context, { code, message: error.message });
  }
  console.error(`skillbox http: ${context.req.method} ${context.req.path} failed`, error);
  return errorResponse(context, {
    code: "INTERNAL_ERROR",
    message: "The server failed to handle this request; its log has the details",
  });
}

/** Shorthand for throwing a `REQUEST_INVALID` (400). */
export function requestInvalid(message: string, data?: unknown): SkillboxError {
  return new SkillboxError("REQUEST_INVALID", message, data === undefined ? {} : { data });
}
