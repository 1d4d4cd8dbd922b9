import { createHmac } from "node:crypto";

/** Object keys sorted at every level: two inputs that differ only in key order hash alike. */
function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  // fromEntries defines properties, so a `__proto__` key stays data instead of a prototype.
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, record[key]]),
  );
}

/**
 * HMAC-SHA256 (hex) under `key` of `input` as canonical JSON — keys sorted, JSON's own rules
 * otherwise — which is how an idempotency key's repeat is compared with the first call. Keyed
 * (the database's own key, see `ExecutionStore.inputHashKey`) because the caller's input may hold
 * a secret the audit trail redacts: an unkeyed hash of a low-entropy one (a password) could be
 * guessed by hashing candidates. Null when the input cannot be written as JSON (a cycle, a
 * BigInt): such an input is not compared.
 */
export function hashInput(input: unknown, key: Buffer): string | null {
  let canonical: string | undefined;
  try {
    canonical = JSON.stringify(input, sortedKeys);
  } catch {
    return null;
  }
  // `undefined` (no input) has no JSON text; it still needs a hash of its own.
  return createHmac("sha256", key)
    .update(canonical ?? "undefined")
    .digest("hex");
}
