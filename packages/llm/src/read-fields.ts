/** A plain object, or an empty one for anything else — responses are untrusted `unknown`s. */
export function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** An array, or an empty one for anything else. */
export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A string, or `fallback` for anything else. */
export function asString(value: unknown, fallback = ""): string {
  return typeof value === "string" ? value : fallback;
}
