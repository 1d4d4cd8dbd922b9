import { DATABASE_NOW } from "./postgres-clock.js";
import type { PostgresSession } from "./postgres-session.js";

/** One schema step; recorded in `skillbox_migrations` once applied. */
interface PostgresMigration {
  version: number;
  description: string;
  sql: string;
}

/**
 * Key of the transaction-scoped advisory lock that serialises migrations across processes
 * ("skillbox" in ASCII, 0x736b696c6c626f78, in decimal: PostgreSQL 15 reads no hex literals): every host starting at once waits its turn.
 */
const MIGRATION_LOCK_KEY = "8316857051265527672";

/**
 * The ordered schema history of the PostgreSQL record. Never edit an applied migration: append.
 * The tables and columns are SQLite's (packages/core/src/database/migrations.ts, versions 1–7)
 * in PostgreSQL's dialect: BIGINT for ms timestamps and counters, DOUBLE PRECISION for
 * durations, JSON kept as TEXT so both read alike. Not here: the registry (`skills`: every host
 * loads its own folders), API keys, and `skillbox_runners` (workers are in `skillbox_workers`,
 * so `runner` is a plain nullable BIGINT).
 */
const MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    description: "the shared record: executions, their jobs, cancel requests, events, workers",
    sql: `
      CREATE TABLE skill_executions (
        id TEXT PRIMARY KEY,
        skill_id TEXT NOT NULL,
        skill_name TEXT NOT NULL,
        skill_version TEXT NOT NULL,
        api_key_id TEXT NOT NULL,
        session_id TEXT,
        parent_execution_id TEXT,
        idempotency_key TEXT,
        input TEXT,
        output TEXT,
        status TEXT NOT NULL,
        error_code TEXT,
        error_message TEXT,
        error_data TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        duration_ms DOUBLE PRECISION,
        created_at BIGINT NOT NULL,
        finished_at BIGINT,
        runner BIGINT,
        input_hash TEXT,
        progress TEXT,
        approval TEXT,
        trace_id TEXT,
        span_id TEXT,
        content_hash TEXT
      );
      -- Callers are owner-scoped, so (owner, skill) serves both filters; "newest first" pages
      -- walk the time index (SQLite has rowid order for free, PostgreSQL needs it spelled out).
      CREATE INDEX executions_by_owner_skill ON skill_executions (api_key_id, skill_name);
      CREATE INDEX executions_by_time ON skill_executions (created_at DESC, id DESC);
      CREATE UNIQUE INDEX executions_by_idempotency_key ON skill_executions (api_key_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;

      -- The raw input and the claim of each execution under way; deleted when it ends.
      CREATE TABLE skill_execution_jobs (
        execution_id TEXT PRIMARY KEY,
        api_key_id TEXT NOT NULL,
        skill_id TEXT NOT NULL,
        skill_name TEXT NOT NULL,
        input TEXT,
        options TEXT NOT NULL,
        state TEXT NOT NULL,
        queued_at BIGINT NOT NULL,
        claimed_by BIGINT,
        approval_expires_at BIGINT,
        approved INTEGER NOT NULL DEFAULT 0,
        rerunnable INTEGER NOT NULL DEFAULT 0,
        queue TEXT,
        content_hash TEXT,
        deadline_at BIGINT,
        fence BIGINT NOT NULL DEFAULT 0,
        lease_owner TEXT,
        lease_expires_at BIGINT,
        enqueued_at BIGINT
      );
      CREATE INDEX jobs_queued ON skill_execution_jobs (api_key_id, queued_at) WHERE state = 'queued';
      CREATE INDEX jobs_stale_queued ON skill_execution_jobs (enqueued_at, queued_at) WHERE state = 'queued';
      CREATE INDEX jobs_leases ON skill_execution_jobs (lease_expires_at) WHERE lease_owner IS NOT NULL;
      CREATE INDEX jobs_expiring ON skill_execution_jobs (approval_expires_at)
        WHERE state = 'awaiting_approval' AND approval_expires_at IS NOT NULL;

      CREATE TABLE skill_execution_cancels (
        execution_id TEXT PRIMARY KEY,
        reason TEXT,
        requested_at BIGINT NOT NULL
      );

      -- Status changes and progress, in order: a listener that reconnects reads what it missed.
      CREATE TABLE skill_execution_events (
        seq BIGSERIAL PRIMARY KEY,
        execution_id TEXT NOT NULL,
        api_key_id TEXT NOT NULL,
        skill_name TEXT NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        runner BIGINT,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX events_by_time ON skill_execution_events (created_at);

      CREATE TABLE skillbox_workers (
        worker_id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        queues TEXT NOT NULL,
        skills TEXT NOT NULL,
        concurrency INTEGER NOT NULL,
        running INTEGER NOT NULL,
        started_at BIGINT NOT NULL,
        last_heartbeat_at BIGINT NOT NULL
      );

      -- The key of input hashes (an HMAC, as in SQLite's skillbox_keys): one per database, so
      -- every host hashes an idempotent call's input alike. gen_random_uuid() is the built-in
      -- strong random source (no pgcrypto): two of them give 32 bytes, 244 of them random.
      CREATE TABLE skillbox_keys (
        name TEXT PRIMARY KEY,
        key BYTEA NOT NULL
      );
      INSERT INTO skillbox_keys (name, key)
        VALUES ('input_hash', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));
    `,
  },
  {
    version: 2,
    description: "the newest executions of each owner and skill name, for statistics",
    sql: `
      -- skillStats and durationHistogram read each name's most recent executions: with the time
      -- in the index that is a walk of exactly the window, not a sort of the owner's history.
      -- It serves every (owner, skill) filter too, so the narrower index goes.
      CREATE INDEX executions_by_owner_skill_time
        ON skill_executions (api_key_id, skill_name, created_at DESC, id DESC);
      DROP INDEX executions_by_owner_skill;
    `,
  },
  {
    version: 3,
    description: "a bound on requeues after lost leases; the deadlines of queued executions",
    sql: `
      -- How often a lost lease put the job back in the queue: a rerunnable skill that kills its
      -- worker each time (out of memory) is requeued a few times, then ends interrupted.
      ALTER TABLE skill_execution_jobs ADD COLUMN requeues INTEGER NOT NULL DEFAULT 0;
      -- The recovery ends queued executions whose deadline passed while no worker took them.
      CREATE INDEX jobs_queued_deadline ON skill_execution_jobs (deadline_at)
        WHERE state = 'queued' AND deadline_at IS NOT NULL;
    `,
  },
];

/** The newest schema version this code knows. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/**
 * Brings the database to the newest schema in one transaction under an advisory lock, so
 * several hosts starting at once apply each migration exactly once (the others wait, then find
 * nothing to do). A failing migration rolls back whole.
 */
export async function migratePostgres(session: PostgresSession): Promise<void> {
  await session.transaction(async (transaction) => {
    // The pool's statement timeout (30 s) bounds queries, not schema changes: waiting for another
    // host's migration, or a migration of a large table, may take longer.
    await transaction.run("SET LOCAL statement_timeout = '15min'");
    await transaction.run(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
    await transaction.run(
      `CREATE TABLE IF NOT EXISTS skillbox_migrations (
         version INTEGER PRIMARY KEY,
         description TEXT NOT NULL,
         applied_at BIGINT NOT NULL
       )`,
    );
    const [current] = await transaction.rows<{ version: number | null }>(
      "SELECT max(version) AS version FROM skillbox_migrations",
    );
    const applied = current?.version ?? 0;
    for (const migration of MIGRATIONS) {
      if (migration.version <= applied) continue;
      await transaction.run(migration.sql);
      await transaction.run(
        `INSERT INTO skillbox_migrations (version, description, applied_at) VALUES ($1, $2, ${DATABASE_NOW})`,
        [migration.version, migration.description],
      );
    }
  });
}

/**
 * The schema version applied to the database (0 when it was never migrated), read without
 * creating anything: `skillbox doctor` reports a database that needs migration, it does not migrate it.
 */
export async function readPostgresSchemaVersion(session: PostgresSession): Promise<number> {
  // Two statements: a query naming a missing table fails when parsed, whatever its CASE says.
  const table = await session.one<{ exists: boolean }>(
    "SELECT to_regclass('skillbox_migrations') IS NOT NULL AS exists",
  );
  if (table?.exists !== true) return 0;
  const row = await session.one<{ version: number | null }>(
    "SELECT max(version) AS version FROM skillbox_migrations",
  );
  return row?.version ?? 0;
}
