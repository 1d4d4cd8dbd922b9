import type { ExecutionStatus } from "../types.js";

/**
 * The statuses an error code can end an execution with besides `error`: the refusals and the
 * stops that callers branch on. `interrupted` is not one — only recovery writes it, never a throw.
 */
export type ErrorCodeStatus = Extract<ExecutionStatus, "timeout" | "cancelled" | "denied" | "rejected">;

/** How one error code behaves, and the one line that documents it. */
export interface ErrorCodeDefinition {
  /** One line saying what went wrong (and, where it helps, what to do): the code lists show it. */
  readonly description: string;
  /**
   * Whether an error with this code is retried unless it says otherwise (its `retryable` option);
   * default true. Only core's codes are looked up: a front's codes never end an execution.
   */
  readonly retryable?: boolean;
  /** The status an execution ends with when an error with this code ends it; default `error`. */
  readonly status?: ErrorCodeStatus;
  /**
   * Whether an interceptor's `onError` may answer with an output instead (default true). A
   * refusal or a cancellation is final: recovering from it would let the execution through.
   */
  readonly recoverable?: boolean;
}

/** A table of error codes: each code, written `UPPER_SNAKE_CASE`, with its definition. */
export type ErrorCatalogue<Code extends string = string> = { readonly [Name in Code]: ErrorCodeDefinition };

/** The code union of a catalogue: `ErrorCodeOf<typeof SERVER_ERROR_CODES>`. */
export type ErrorCodeOf<Catalogue extends ErrorCatalogue> = keyof Catalogue & string;

/**
 * Declares the error codes a package raises, each with its one line of documentation; the code
 * union is derived from the table (`ErrorCodeOf<typeof TABLE>`), so a code exists only where it
 * is documented. Core's own table is `SKILLBOX_ERROR_CATALOGUE`; the server, the CLI, the LLM
 * adapters and the loader declare theirs the same way.
 *
 * @example
 * const SERVER_ERROR_CODES = defineErrorCodes({
 *   AUTH_REQUIRED: { description: "The request carries no API key and the server requires one." },
 * });
 * type ServerErrorCode = ErrorCodeOf<typeof SERVER_ERROR_CODES>; // "AUTH_REQUIRED"
 */
export function defineErrorCodes<const Catalogue extends ErrorCatalogue>(catalogue: Catalogue): Catalogue {
  return Object.freeze(catalogue);
}
