/**
 * The end of an execution id, for tables: ids are UUIDv7, whose first digits are the creation
 * time (shared by every execution of the same minute) and whose last ones are random.
 */
export function shortExecutionId(id: string): string {
  return id.length > 13 ? `…${id.slice(-12)}` : id;
}
