import { SkillboxError } from "@skillbox/core";

/** Node's socket errors that mean the server cannot be reached (or went away). */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
]);

/**
 * Where the database is, for messages: `host:port` of the URL and nothing else. The URL may
 * carry a password (and options); a message, a log line or an HTTP answer must never show it.
 */
export function describeTarget(url: string): string {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname === "" ? "localhost" : parsed.hostname;
    return `${host}:${parsed.port === "" ? "5432" : parsed.port}`;
  } catch {
    return "the configured PostgreSQL server";
  }
}

/** Whether `error` says the server cannot be reached, rather than that a statement failed. */
function isUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (UNREACHABLE_CODES.has(code)) return true;
    // SQLSTATE class 08 (connection exception), 57P01–57P03 (shutdown, cannot connect now).
    if (code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03") return true;
  }
  return /Connection terminated|Client has encountered a connection error/i.test(error.message);
}

/**
 * Whether `error` is node-postgres' pool giving up waiting for a free connection: every one was
 * busy for the whole connect timeout. The server may be fine; the pool is too small for the load.
 */
function isPoolExhausted(error: unknown): boolean {
  return error instanceof Error && error.message === POOL_WAIT_TIMEOUT_MESSAGE;
}

/** What pg-pool rejects a `connect()` with when no connection became free in time. */
const POOL_WAIT_TIMEOUT_MESSAGE = "timeout exceeded when trying to connect";

/**
 * The error a store method answers with: `STORE_UNAVAILABLE` naming `host:port` when the server
 * cannot be reached or the pool had no free connection in time (saying which: the fixes differ;
 * retryable both: the caller may try again later), `DATABASE_ERROR` otherwise.
 * The server's message is kept (it names tables and constraints, never the connection's password).
 */
export function storeError(error: unknown, target: string): SkillboxError {
  if (error instanceof SkillboxError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const cause = causeOf(error, message);
  if (isPoolExhausted(error)) {
    // Retryable like an outage (the connections free up), but the fix is the pool's size.
    return new SkillboxError(
      "STORE_UNAVAILABLE",
      `PostgreSQL at ${target}: the connection pool is exhausted, no connection became free in time: raise pool.max (createPostgresRecordStore({ pool: { max } })) or lower the worker's concurrency (connections stuck on a server that does not answer hold the pool too)`,
      { cause },
    );
  }
  if (isUnreachable(error)) {
    return new SkillboxError("STORE_UNAVAILABLE", `PostgreSQL at ${target} is unreachable: ${message}`, {
      cause,
    });
  }
  return new SkillboxError("DATABASE_ERROR", `PostgreSQL at ${target}: ${message}`, { cause });
}

/**
 * The cause kept on the error: message, code and stack only. node-postgres may hang its client
 * on an error (`error.client`, with the connection parameters and so the password), and a logger
 * that serialises causes deeply would print it.
 */
function causeOf(error: unknown, message: string): Error {
  const cause = new Error(message) as Error & { code?: string };
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === "string") cause.code = code;
  if (error instanceof Error && error.stack !== undefined) cause.stack = error.stack;
  return cause;
}
