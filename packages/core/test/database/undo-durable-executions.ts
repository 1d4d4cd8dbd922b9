import { UNDO_SHARED_RECORD } from "./undo-shared-record.js";

/**
 * SQL that takes a database of the newest schema back to before durable executions (schema
 * version 4): what tests of older migrations run first, so the file looks as older versions left it.
 * Migration 7 (the shared record) goes first, then migration 6 (the trace columns), then migration 5.
 */
export const UNDO_DURABLE_EXECUTIONS = `
  ${UNDO_SHARED_RECORD}
  ALTER TABLE skill_executions DROP COLUMN trace_id;
  ALTER TABLE skill_executions DROP COLUMN span_id;
  DROP TABLE skill_execution_jobs;
  DROP TABLE skill_execution_cancels;
  DROP TABLE skill_execution_events;
  ALTER TABLE skill_executions DROP COLUMN progress;
  ALTER TABLE skill_executions DROP COLUMN approval;
  ALTER TABLE skills DROP COLUMN approval;
  ALTER TABLE skills DROP COLUMN approval_timeout_ms;
  ALTER TABLE skills DROP COLUMN concurrency;
  ALTER TABLE skills DROP COLUMN idempotent;
`;
