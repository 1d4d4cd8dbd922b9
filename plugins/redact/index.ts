import { defineInterceptor, type Interceptor, parseInterceptorOptions } from "@skillbox/core";
import { z } from "zod";

/** Keys masked when `keys` is not given. */
export const DEFAULT_REDACTED_KEYS: readonly string[] = [
  "password",
  "token",
  "apiKey",
  "secret",
  "authorization",
  "accessToken",
  "refreshToken",
];

/** Options of the redact interceptor (the `options` block of `interceptor.json`). */
export interface RedactOptions {
  /** Property names whose values are masked, compared case-insensitively; replaces {@link DEFAULT_REDACTED_KEYS}. */
  keys?: string[];
  /** What a masked value becomes (default `"[REDACTED]"`). */
  mask?: string;
}

/**
 * Below any reasonable user order: `audit` hooks run outermost last, so the lowest order sees —
 * and masks — whatever the other interceptors' `audit` hooks produced.
 */
const REDACT_ORDER = -1_000_000;

const optionsSchema = z
  .object(
    {
      keys: z
        .array(z.string().min(1, "must not be empty"), { error: "must be an array of property names" })
        .default([...DEFAULT_REDACTED_KEYS]),
      mask: z.string({ error: "must be a string" }).default("[REDACTED]"),
    },
    { error: "must be an object" },
  )
  .strict();

/**
 * Returns a copy of `value` with the values of `keys` (lower-cased) replaced by `mask`, at any depth.
 * Follows `JSON.stringify` (calls `toJSON`, walks own enumerable properties) because the result is
 * stored as JSON: a secret that would reach the row is a secret this walk visits. Never mutates
 * `value` — the caller of the execution still holds it.
 */
function redactValue(
  value: unknown,
  keys: ReadonlySet<string>,
  mask: string,
  ancestors: Set<object>,
): unknown {
  let current = value;
  if (
    typeof current === "object" &&
    current !== null &&
    typeof (current as { toJSON?: unknown }).toJSON === "function"
  ) {
    current = (current as { toJSON(): unknown }).toJSON();
  }
  if (typeof current !== "object" || current === null) return current;
  // A cycle would make the row unserialisable anyway; a marker keeps the rest of the value readable.
  if (ancestors.has(current)) return "[Circular]";
  ancestors.add(current);
  try {
    if (Array.isArray(current)) return current.map((item) => redactValue(item, keys, mask, ancestors));
    // Object.fromEntries defines own properties. Assigning `copy[key] = …` would turn a
    // `__proto__` key into the copy's prototype: the handler would get that data and the row,
    // stored as JSON, would silently lack it.
    return Object.fromEntries(
      Object.entries(current).map(([key, item]) => [
        key,
        keys.has(key.toLowerCase()) ? mask : redactValue(item, keys, mask, ancestors),
      ]),
    );
  } finally {
    ancestors.delete(current);
  }
}

/**
 * Creates the redact interceptor: masks secrets in what the audit trail stores for input and output.
 * The caller of `execute()` still receives the real output; only the stored row is redacted (so a
 * repeat served from the row through an idempotency key gets the masked form). Error messages and
 * error data are not covered — the `audit` hook only sees input and output.
 */
export function createRedactInterceptor(options: RedactOptions = {}): Interceptor {
  const { keys, mask } = parseInterceptorOptions("redact", optionsSchema, options);
  const lowerCaseKeys = new Set(keys.map((key) => key.toLowerCase()));
  return defineInterceptor({
    name: "redact",
    order: REDACT_ORDER,
    audit(_context, entry) {
      const redacted: typeof entry = {};
      if ("input" in entry) redacted.input = redactValue(entry.input, lowerCaseKeys, mask, new Set());
      if ("output" in entry) redacted.output = redactValue(entry.output, lowerCaseKeys, mask, new Set());
      return redacted;
    },
  });
}

/** The plugin's entry point: the loader calls it with the manifest's `options`. */
export default createRedactInterceptor;
