/** The message of a thrown value, for log fields. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
