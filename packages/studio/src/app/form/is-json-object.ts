/** Whether a JSON value is an object (not null, not an array): a schema, a property map. */
export function isJsonObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
