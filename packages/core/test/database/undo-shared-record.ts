/**
 * SQL that takes a database of the newest schema back to before the shared record of executions
 * (schema version 6): what tests of older migrations run first, so that migration 7 applies again.
 * Indexes that name a column go before the column.
 */
export const UNDO_SHARED_RECORD = `
  DROP TABLE skillbox_workers;
  DELETE FROM skillbox_runners WHERE runner_id = 'skillbox:record-store';
  DROP INDEX jobs_leased;
  DROP INDEX jobs_stale_queued;
  DROP INDEX jobs_queued_deadline;
  DROP INDEX jobs_queued;
  CREATE INDEX jobs_queued ON skill_execution_jobs (api_key_id, queued_at) WHERE state = 'queued';
  ALTER TABLE skill_execution_jobs DROP COLUMN queue;
  ALTER TABLE skill_execution_jobs DROP COLUMN content_hash;
  ALTER TABLE skill_execution_jobs DROP COLUMN deadline_at;
  ALTER TABLE skill_execution_jobs DROP COLUMN fence;
  ALTER TABLE skill_execution_jobs DROP COLUMN lease_owner;
  ALTER TABLE skill_execution_jobs DROP COLUMN lease_expires_at;
  ALTER TABLE skill_execution_jobs DROP COLUMN enqueued_at;
  ALTER TABLE skill_execution_jobs DROP COLUMN requeues;
  ALTER TABLE skill_executions DROP COLUMN content_hash;
  ALTER TABLE skills DROP COLUMN queue;
`;
