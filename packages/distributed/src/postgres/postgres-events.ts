import type { ExecutionStatus, RecordNotice } from "@skillbox/core";
import { DATABASE_NOW } from "./postgres-clock.js";
import type { Queryable } from "./postgres-session.js";

/** The one channel every store NOTIFYs and LISTENs on. */
export const NOTICE_CHANNEL = "skillbox_executions";

/** Which execution an event is about. */
export interface EventSubject {
  id: string;
  owner: string;
  skillName: string;
}

/**
 * A notice on the wire: ids, the status and the event's sequence number, nothing else — well
 * under NOTIFY's 8000 bytes, and never an input or an output.
 */
interface WireNotice {
  t: "status" | "progress" | "cancel";
  i: string;
  o?: string;
  s?: ExecutionStatus;
  /** `skill_execution_events.seq`: a listener that reconnects reads on from the last it saw. */
  q?: number;
}

async function append(
  transaction: Queryable,
  subject: EventSubject,
  type: "status" | "progress",
  data: string,
  status?: ExecutionStatus,
): Promise<void> {
  // NOTIFY inside the transaction is delivered on COMMIT, and dropped on ROLLBACK: a notice
  // never tells of a change that did not happen.
  await transaction.run(
    `WITH event AS (
       INSERT INTO skill_execution_events (execution_id, api_key_id, skill_name, type, data, created_at)
       VALUES ($1, $2, $3, $4, $5, ${DATABASE_NOW}) RETURNING seq)
     SELECT pg_notify($6, json_build_object('t', $4::text, 'i', $1::text, 'o', $2::text, 's', $7::text, 'q', event.seq)::text)
     FROM event`,
    [subject.id, subject.owner, subject.skillName, type, data, NOTICE_CHANNEL, status ?? null],
  );
}

/** Appends a status event of `subject` and notifies every listener (inside the writing transaction). */
export function appendStatus(
  transaction: Queryable,
  subject: EventSubject,
  status: ExecutionStatus,
): Promise<void> {
  return append(transaction, subject, "status", JSON.stringify({ status }), status);
}

/** Appends a progress event (the progress itself stays in the table, off the wire). */
export function appendProgress(
  transaction: Queryable,
  subject: EventSubject,
  progressJson: string,
): Promise<void> {
  return append(transaction, subject, "progress", progressJson);
}

/** Tells every listener that someone asked to cancel `id`. */
export async function notifyCancel(transaction: Queryable, id: string): Promise<void> {
  await transaction.run("SELECT pg_notify($1, json_build_object('t', 'cancel', 'i', $2::text)::text)", [
    NOTICE_CHANNEL,
    id,
  ]);
}

/** A notice read off the wire, or undefined for a payload this version does not know. */
export function parseNotice(
  payload: string | undefined,
): { notice: RecordNotice; seq: number | undefined } | undefined {
  if (payload === undefined) return undefined;
  let wire: WireNotice;
  try {
    wire = JSON.parse(payload) as WireNotice;
  } catch {
    return undefined;
  }
  const seq = typeof wire.q === "number" ? wire.q : undefined;
  if (typeof wire.i !== "string") return undefined;
  if (wire.t === "cancel") return { notice: { type: "cancel", executionId: wire.i }, seq };
  if (typeof wire.o !== "string") return undefined;
  if (wire.t === "progress")
    return { notice: { type: "progress", executionId: wire.i, apiKeyId: wire.o }, seq };
  if (wire.t === "status" && typeof wire.s === "string") {
    return { notice: { type: "status", executionId: wire.i, apiKeyId: wire.o, status: wire.s }, seq };
  }
  return undefined;
}

/** A stored event as a notice (what a listener that reconnected missed). */
export function eventNotice(row: {
  execution_id: string;
  api_key_id: string;
  type: string;
  data: string;
}): RecordNotice | undefined {
  if (row.type === "progress")
    return { type: "progress", executionId: row.execution_id, apiKeyId: row.api_key_id };
  if (row.type !== "status") return undefined;
  try {
    const { status } = JSON.parse(row.data) as { status: ExecutionStatus };
    return { type: "status", executionId: row.execution_id, apiKeyId: row.api_key_id, status };
  } catch {
    return undefined;
  }
}
