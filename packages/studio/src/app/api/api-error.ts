/**
 * An error answer of the Skillbox HTTP API (`{ error: { code, message, data? } }`), or a request
 * that never got one (`code` "NETWORK_ERROR", status 0), or a 2xx answer that is not JSON
 * (`code` "BAD_RESPONSE"). The message is the server's: it names
 * the field and the fix, so the Studio shows it as it is.
 */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly status: number;
  readonly code: string;
  readonly data: unknown;

  constructor(options: { status: number; code: string; message: string; data?: unknown }) {
    super(options.message);
    this.status = options.status;
    this.code = options.code;
    this.data = options.data;
  }

  /** Whether the server wants an API key, or a different one. */
  get unauthorized(): boolean {
    return this.code === "AUTH_REQUIRED" || this.code === "AUTH_INVALID";
  }
}

/** Whether `error` is an {@link ApiError}. */
export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}
