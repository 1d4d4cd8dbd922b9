/** The smallest UUIDv7 that can be minted at `milliseconds` (ids compare as fixed-width hex). */
export function uuidV7LowerBound(milliseconds: number): string {
  const hex = Math.max(0, Math.trunc(milliseconds)).toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8)}-0000-0000-000000000000`;
}
