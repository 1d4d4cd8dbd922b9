import { isSkillboxError, SkillboxError, type SkillboxErrorCode, toCallerError } from "@skillbox/core";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ServerErrorCode } from "../server-error-codes.js";

/** The one error body every route answers with. */
export interface HttpErrorBody {
  error: { code: string; message: string; data?: unknown };
}

/**
 * The HTTP status of every error code core and the server declare, so a new code fails to
 * compile until it has one. Server faults are 500. The execution outcomes that are recorded (a
 * handler's error, a timeout, a denial) are answered with the record and 200: their statuses
 * here apply only when such an error is thrown before an execution exists. Codes of neither
 * table (a handler's own) are 500.
 */
const STATUS_BY_CODE = {
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
  // Acting on an execution in a state that does not allow it: cancelling a finished one,
  // deciding an approval twice, too late, or one never asked for.
  EXECUTION_FINISHED: 409,
  APPROVAL_NOT_PENDING: 409,
  APPROVAL_EXPIRED: 409,
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
  // A distributed host whose shared record or queue does not answer (or evicts): retry later.
  STORE_UNAVAILABLE: 503,
  QUEUE_UNAVAILABLE: 503,
  QUEUE_EVICTING: 503,
  // Server faults: a configuration the host got wrong, or a failure of its own.
  API_KEYS_INVALID: 500,
  SERVER_CONFIG_INVALID: 500,
  SERVER_LISTEN_FAILED: 500,
  SERVER_UNSAFE_BIND: 500,
  INTERNAL_ERROR: 500,
  HANDLER_NOT_FOUND: 500,
  RUNTIME_NOT_FOUND: 500,
  OUTPUT_INVALID: 500,
  REGISTRATION_INVALID: 500,
  MANIFEST_INVALID: 500,
  HANDLER_INVALID: 500,
  REQUIREMENTS_UNMET: 500,
  CANCELLED: 500,
  DENIED: 500,
  INTERCEPTOR_FAILED: 500,
  HANDLER_ERROR: 500,
  CALL_DEPTH_EXCEEDED: 500,
  UNDECLARED_DEPENDENCY: 500,
  INTERRUPTED: 500,
  // Recorded outcomes of a distributed run: a queued execution past its deadline, and a worker
  // with other code for the skill than the submitting host.
  DEADLINE_EXCEEDED: 500,
  SKILL_VERSION_MISMATCH: 500,
  // Recorded outcomes and internal signals, answered as records (a rejected execution is 200).
  APPROVAL_REJECTED: 500,
  APPROVAL_REQUIRED: 500,
  // The long-polls catch a wait's timeout and answer with the current record; an aborted wait
  // has no client left to answer.
  WAIT_TIMEOUT: 504,
  WAIT_ABORTED: 500,
  OUT_OF_MEMORY: 500,
  WORKER_EXITED: 500,
  SANDBOX_FAILED: 500,
  SANDBOX_UNAVAILABLE: 500,
  SANDBOX_CONFIG_INVALID: 500,
  URL_REFUSED: 500,
  REQUEST_REFUSED: 500,
  PATH_REFUSED: 500,
  FILE_NOT_FOUND: 500,
  SIZE_LIMIT_EXCEEDED: 500,
  UPSTREAM_ERROR: 500,
  BROWSER_UNAVAILABLE: 500,
  ELEMENT_NOT_FOUND: 500,
  LANGUAGE_UNAVAILABLE: 500,
  CONFIG_INVALID: 500,
} as const satisfies Record<SkillboxErrorCode | ServerErrorCode, ContentfulStatusCode>;

/** Statuses by code, without a prototype: a handler's code "constructor" must find nothing. */
const STATUS_LOOKUP: ReadonlyMap<string, ContentfulStatusCode> = new Map(Object.entries(STATUS_BY_CODE));

/** The status for an error code: 500 for codes that do not describe a client mistake. */
function statusForCode(code: string): ContentfulStatusCode {
  return STATUS_LOOKUP.get(code) ?? 500;
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
