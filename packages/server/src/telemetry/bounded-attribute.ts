/** Longest caller-given string kept as a span attribute (names and ids are short; a longer one is cut). */
const MAX_ATTRIBUTE_LENGTH = 256;

/**
 * `value` cut to 256 characters: for what a caller sends (a tool or method name it made up, a
 * JSON-RPC id). A span waits in the SDK's export queue long after its request, so a body-sized
 * attribute there would let callers hold the server's memory.
 *
 * @internal
 */
export function boundedAttribute(value: string): string {
  return value.length > MAX_ATTRIBUTE_LENGTH ? value.slice(0, MAX_ATTRIBUTE_LENGTH) : value;
}
