import { type ExecutionRecord, isFinalStatus } from "./api-types.js";

/**
 * The record of an execution to show of two: a final one is never replaced by an earlier,
 * unfinished state (a read or an action's answer that arrives after the `finished` event).
 */
export function latestRecord(
  current: ExecutionRecord | undefined,
  incoming: ExecutionRecord,
): ExecutionRecord {
  if (current === undefined || current.id !== incoming.id) return incoming;
  if (isFinalStatus(current.status) && !isFinalStatus(incoming.status)) return current;
  return incoming;
}
