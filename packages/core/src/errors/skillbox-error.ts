import { isRetriedByDefault, type SkillboxErrorCode } from "./error-catalogue.js";

export type { SkillboxErrorCode } from "./error-catalogue.js";

/** Options for {@link SkillboxError}. */
export interface SkillboxErrorOptions {
  /** The underlying error, kept for debugging. */
  cause?: unknown;
  /** Structured details (for example the list of schema violations). */
  data?: unknown;
  /** Overrides the default retry classification of the code. */
  retryable?: boolean;
}

/**
 * The one error class of Skillbox. `code` is stable and documented; `message` names
 * the thing that went wrong and how to fix it. Skillbox itself raises only the codes of its
 * catalogues (`SKILLBOX_ERROR_CATALOGUE` and the tables packages declare with
 * `defineErrorCodes`), which also give a code's default `retryable`.
 *
 * Handlers may throw it with their own codes (any string) to control retries:
 * `throw new SkillboxError("RATE_LIMITED", "…", { retryable: true })`.
 */
export class SkillboxError extends Error {
  override readonly name = "SkillboxError";
  readonly code: SkillboxErrorCode | (string & {});
  readonly data: unknown;
  readonly retryable: boolean;

  constructor(code: SkillboxErrorCode | (string & {}), message: string, options: SkillboxErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = options.data;
    this.retryable = options.retryable ?? isRetriedByDefault(code);
  }

  /** A plain object safe to serialise into JSON (HTTP bodies, audit rows). */
  toJSON(): { code: string; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** Type guard for {@link SkillboxError}, also across module copies (checks the shape, not the prototype). */
export function isSkillboxError(value: unknown): value is SkillboxError {
  return (
    value instanceof SkillboxError ||
    (value instanceof Error &&
      value.name === "SkillboxError" &&
      typeof (value as { code?: unknown }).code === "string")
  );
}

/** Creates the error an interceptor throws to refuse an execution (status `denied`). */
export function deny(message: string, data?: unknown): SkillboxError {
  return new SkillboxError("DENIED", message, { data });
}
