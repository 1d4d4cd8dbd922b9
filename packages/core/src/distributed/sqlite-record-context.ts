import type Database from "better-sqlite3";
import { rowToExecution } from "../executor/execution-store.js";
import type { ExecutionStatus, SkillExecution } from "../types.js";
import type { RecordStatements } from "./sqlite-record-statements.js";

/** What the parts of the SQLite record store share: the open file, its statements, its runner row. */
export interface SqliteRecordContext {
  readonly database: Database.Database;
  readonly statements: RecordStatements;
  /** The key of the shared record's row in `skillbox_runners` (see migration 7). */
  readonly runnerKey: number;
}

/** Which execution an event is about, as the event log names it. */
export interface EventSubject {
  id: string;
  apiKeyId: string;
  skillName: string;
}

/** Appends a status event (what subscribers in every process poll for). */
export function appendStatus(
  context: SqliteRecordContext,
  subject: EventSubject,
  status: ExecutionStatus,
  now: number,
): void {
  context.statements.insertEvent.run(
    subject.id,
    subject.apiKeyId,
    subject.skillName,
    "status",
    JSON.stringify({ status }),
    context.runnerKey,
    now,
  );
}

/** The record of `id`, or undefined when there is none or `owner` is given and does not own it. */
export function readExecution(
  context: SqliteRecordContext,
  id: string,
  owner?: string,
): SkillExecution | undefined {
  const row = context.statements.execution.get(id);
  if (row === undefined || (owner !== undefined && row.api_key_id !== owner)) return undefined;
  return rowToExecution(row);
}

/**
 * Ends an execution nobody runs (`from` is its status now) with a final status and error, drops
 * its job and any cancel request, and logs the status — inside the caller's transaction. False
 * when it was no longer in `from`.
 */
export function endUnclaimedRow(
  context: SqliteRecordContext,
  end: {
    subject: EventSubject;
    from: ExecutionStatus;
    status: ExecutionStatus;
    code: string;
    message: string;
    approvalJson: string | null;
    now: number;
  },
): boolean {
  const { statements } = context;
  const { subject } = end;
  const ended = statements.endExecution.run(
    end.status,
    end.code,
    end.message,
    end.approvalJson,
    end.now,
    subject.id,
    end.from,
  );
  if (ended.changes === 0) return false;
  statements.deleteJob.run(subject.id);
  statements.deleteCancel.run(subject.id);
  appendStatus(context, subject, end.status, end.now);
  return true;
}

/** The event subject of an execution row. */
export function subjectOf(row: { id: string; api_key_id: string; skill_name: string }): EventSubject {
  return { id: row.id, apiKeyId: row.api_key_id, skillName: row.skill_name };
}

/** The event subject of a job row (its execution's id, owner and skill name). */
export function jobSubjectOf(job: {
  execution_id: string;
  api_key_id: string;
  skill_name: string;
}): EventSubject {
  return { id: job.execution_id, apiKeyId: job.api_key_id, skillName: job.skill_name };
}
