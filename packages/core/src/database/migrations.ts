import type Database from "better-sqlite3";

/** One schema step; `version` is stored in `PRAGMA user_version` once applied. */
interface Migration {
  version: number;
  description: string;
  sql: string;
}

const revisionTrigger = (event: "INSERT" | "UPDATE" | "DELETE") => `
  CREATE TRIGGER skills_revision_after_${event.toLowerCase()} AFTER ${event} ON skills
  BEGIN
    UPDATE skillbox_meta SET value = value + 1 WHERE key = 'skills_revision';
  END;`;

/**
 * The ordered schema history. Never edit an applied migration: append a new one.
 * `skills_revision` is bumped by triggers on every write to `skills`, so any process can
 * tell cheaply whether its registry cache is stale.
 */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "skills, skill_executions and the registry revision counter",
    sql: `
      CREATE TABLE skillbox_meta (
        key TEXT PRIMARY KEY,
        value INTEGER NOT NULL
      );
      INSERT INTO skillbox_meta (key, value) VALUES ('skills_revision', 0);

      CREATE TABLE skills (
        id TEXT PRIMARY KEY,
        api_key_id TEXT NOT NULL,
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        input_schema TEXT NOT NULL,
        output_schema TEXT,
        handler TEXT NOT NULL,
        runtime TEXT NOT NULL DEFAULT 'inline',
        timeout_ms INTEGER,
        retry TEXT,
        memory_mb REAL,
        sandbox TEXT,
        requires TEXT,
        tags TEXT NOT NULL DEFAULT '[]',
        enabled INTEGER NOT NULL DEFAULT 1,
        source TEXT NOT NULL DEFAULT 'api',
        content_hash TEXT NOT NULL,
        metadata TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (api_key_id, name, version)
      );
      CREATE INDEX skills_by_name ON skills (name);
      ${revisionTrigger("INSERT")}
      ${revisionTrigger("UPDATE")}
      ${revisionTrigger("DELETE")}

      -- One row per executor instance that ever wrote executions: lets a later start tell which
      -- unfinished rows belong to processes that are gone.
      CREATE TABLE skillbox_runners (
        id INTEGER PRIMARY KEY,
        runner_id TEXT NOT NULL UNIQUE,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        closed_at INTEGER
      );

      -- Indexes are few on purpose: every one is paid on each of thousands of inserts a second.
      -- Ids are UUIDv7, so the primary key grows at its right edge and serves "since" ranges and
      -- the recovery of a dead runner's rows. "Newest first" is rowid order, which an index
      -- carries for free. Callers are owner-scoped, so (owner, skill) serves both filters.
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
        duration_ms REAL,
        created_at INTEGER NOT NULL,
        finished_at INTEGER,
        runner INTEGER NOT NULL REFERENCES skillbox_runners (id)
      );
      CREATE INDEX executions_by_owner_skill ON skill_executions (api_key_id, skill_name);
      CREATE UNIQUE INDEX executions_by_idempotency_key ON skill_executions (api_key_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
    `,
  },
  {
    version: 2,
    description: "runner leases and the hash of an idempotent execution's input",
    sql: `
      -- A runner renews its lease while it lives, so any host can tell a dead runner on another
      -- host (a pid means nothing there). Runners written before leases existed never renew:
      -- they get one default lease (30 s) from now, time for their rows to finish, then count
      -- as dead like any runner whose lease expired.
      ALTER TABLE skillbox_runners ADD COLUMN lease_expires_at INTEGER;
      UPDATE skillbox_runners
        SET lease_expires_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + 30000
        WHERE closed_at IS NULL;
      -- Every host sweeps the open runners every few seconds, and the table keeps one row per
      -- executor that ever started: the partial index holds only the open ones.
      CREATE INDEX runners_open ON skillbox_runners (lease_expires_at) WHERE closed_at IS NULL;

      -- sha256 of the caller's input in canonical JSON, set for executions with an idempotency
      -- key: a repeat with another input is a conflict. NULL (rows from before) matches any input.
      ALTER TABLE skill_executions ADD COLUMN input_hash TEXT;
    `,
  },
  {
    version: 3,
    description: "the per-database key of input hashes",
    sql: `
      -- input_hash is an HMAC under this key, made once per file so every process sharing the
      -- file hashes alike. Unkeyed, whoever reads the file could test guesses of a secret the
      -- audit trail redacts (a password) against the hash of the input that carried it.
      CREATE TABLE skillbox_keys (
        name TEXT PRIMARY KEY,
        key BLOB NOT NULL
      );
      INSERT INTO skillbox_keys (name, key) VALUES ('input_hash', randomblob(32));
      -- Hashes written before were unkeyed: dropped, so such rows match any input, like rows
      -- from before hashes. Only rows with a key have one (the partial unique index finds them).
      UPDATE skill_executions SET input_hash = NULL
        WHERE idempotency_key IS NOT NULL AND input_hash IS NOT NULL;
    `,
  },
  {
    version: 4,
    description: "a skill's code location and examples as columns of their own",
    sql: `
      -- Where a skill's handler module lives ({ modulePath, codeHash, root }) and its manifest's
      -- examples were fields of \`metadata\` that runtimes read back by name; they are typed now.
      ALTER TABLE skills ADD COLUMN code TEXT;
      ALTER TABLE skills ADD COLUMN examples TEXT;
      -- Rows the loader wrote before keep working: their fields are copied out of \`metadata\`
      -- (\`codeRoot\`, a bundle member's bundle folder, wins over the package \`root\`; rows
      -- without a code hash used the content hash, as the worker runtime did). \`metadata\` is
      -- left as it is, so a process of the previous version sharing the file still reads it.
      UPDATE skills SET code = json_object(
          'modulePath', json_extract(metadata, '$.handlerPath'),
          'codeHash', CASE WHEN json_type(metadata, '$.codeHash') = 'text'
            THEN json_extract(metadata, '$.codeHash') ELSE content_hash END,
          'root', CASE WHEN json_type(metadata, '$.codeRoot') = 'text'
            THEN json_extract(metadata, '$.codeRoot') ELSE json_extract(metadata, '$.root') END)
        WHERE json_valid(metadata)
          AND json_type(metadata, '$.handlerPath') = 'text'
          AND (json_type(metadata, '$.codeRoot') = 'text' OR json_type(metadata, '$.root') = 'text');
      UPDATE skills SET examples = json_extract(metadata, '$.examples')
        WHERE json_valid(metadata) AND json_type(metadata, '$.examples') = 'array';
    `,
  },
  {
    version: 5,
    description: "durable executions: the queue, approvals, progress and execution events",
    sql: `
      -- What a skill declares about its background runs: approval, its own concurrency limit,
      -- and whether a run its host lost may simply run again.
      ALTER TABLE skills ADD COLUMN approval TEXT;
      ALTER TABLE skills ADD COLUMN approval_timeout_ms INTEGER;
      ALTER TABLE skills ADD COLUMN concurrency INTEGER;
      ALTER TABLE skills ADD COLUMN idempotent INTEGER NOT NULL DEFAULT 0;

      -- The latest progress report and the approval (asked and decided) are part of the record.
      ALTER TABLE skill_executions ADD COLUMN progress TEXT;
      ALTER TABLE skill_executions ADD COLUMN approval TEXT;

      -- One row per execution that lives beyond the call that started it (submitted, or waiting
      -- for approval): what it runs with — the caller's raw input, never redacted, so it is kept
      -- here and not in the audit columns — until it ends, when the row goes.
      CREATE TABLE skill_execution_jobs (
        execution_id TEXT PRIMARY KEY,
        api_key_id TEXT NOT NULL,
        skill_id TEXT NOT NULL,
        skill_name TEXT NOT NULL,
        input TEXT,
        options TEXT NOT NULL,
        state TEXT NOT NULL,
        queued_at INTEGER NOT NULL,
        claimed_by INTEGER,
        approval_expires_at INTEGER,
        approved INTEGER NOT NULL DEFAULT 0,
        rerunnable INTEGER NOT NULL DEFAULT 0
      );
      -- The dispatcher takes the oldest queued job of an owner; recovery finds a runner's jobs.
      CREATE INDEX jobs_queued ON skill_execution_jobs (api_key_id, queued_at) WHERE state = 'queued';
      CREATE INDEX jobs_by_runner ON skill_execution_jobs (claimed_by) WHERE claimed_by IS NOT NULL;
      CREATE INDEX jobs_expiring ON skill_execution_jobs (approval_expires_at)
        WHERE state = 'awaiting_approval' AND approval_expires_at IS NOT NULL;

      -- Cancellations asked for executions running in another process: each host polls for its own.
      CREATE TABLE skill_execution_cancels (
        execution_id TEXT PRIMARY KEY,
        reason TEXT,
        requested_at INTEGER NOT NULL
      );

      -- Status changes and progress of executions, in order, so subscribers in any process on
      -- the file see them. Kept for a while after they are written, then pruned.
      CREATE TABLE skill_execution_events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        execution_id TEXT NOT NULL,
        api_key_id TEXT NOT NULL,
        skill_name TEXT NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        runner INTEGER,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX events_by_time ON skill_execution_events (created_at);
    `,
  },
  {
    version: 6,
    description: "observability: the trace and span of each execution",
    sql: `
      -- Where the audit trail and an OpenTelemetry trace point at each other: the trace of the
      -- execution's execute_tool span and that span's id (null when nothing recorded a trace).
      -- No index: a trace finds its execution by the span's skillbox.execution.id, and an index of
      -- random trace ids would cost every traced insert a random B-tree write.
      ALTER TABLE skill_executions ADD COLUMN trace_id TEXT;
      ALTER TABLE skill_executions ADD COLUMN span_id TEXT;
    `,
  },
  {
    version: 7,
    description: "the shared record of executions: claims with fences, worker leases, workers",
    sql: `
      -- Which code ran (sha256 of the skill's manifest and code as the submitting host loaded it):
      -- with several hosts serving a skill, the audit trail says which deployment answered.
      ALTER TABLE skill_executions ADD COLUMN content_hash TEXT;
      -- The queue a skill's executions are dispatched to on a distributed deployment (NULL: the
      -- default queue), so only the hosts that can run it (a container engine, a GPU) take them.
      ALTER TABLE skills ADD COLUMN queue TEXT;

      -- A job of the shared record (written by an ExecutionRecordStore, run by a worker from a
      -- queue) names its queue; one-host jobs keep it NULL, and each dispatcher takes only its own.
      ALTER TABLE skill_execution_jobs ADD COLUMN queue TEXT;
      ALTER TABLE skill_execution_jobs ADD COLUMN content_hash TEXT;
      -- A queued execution past its deadline never starts (ms since the epoch, database clock).
      ALTER TABLE skill_execution_jobs ADD COLUMN deadline_at INTEGER;
      -- The fencing counter: one higher at every claim, and every write of a claim names it, so a
      -- worker whose lease lapsed (paused, partitioned) can never overwrite a newer claim's outcome.
      ALTER TABLE skill_execution_jobs ADD COLUMN fence INTEGER NOT NULL DEFAULT 0;
      -- The claim's worker and its lease: the liveness of a shared-record execution is this lease
      -- alone (not a runner's), renewed by the worker's heartbeat on the database clock.
      ALTER TABLE skill_execution_jobs ADD COLUMN lease_owner TEXT;
      ALTER TABLE skill_execution_jobs ADD COLUMN lease_expires_at INTEGER;
      -- When the job was last added to its queue (NULL: never since it was last queued): the
      -- sweeper adds again what a host recorded but did not enqueue (it died in between).
      ALTER TABLE skill_execution_jobs ADD COLUMN enqueued_at INTEGER;
      -- How often a lost lease put it back in the queue: a rerunnable skill that kills its worker
      -- each time (out of memory) is requeued a few times, then ends interrupted.
      ALTER TABLE skill_execution_jobs ADD COLUMN requeues INTEGER NOT NULL DEFAULT 0;

      -- The one-host dispatcher seeks the queued jobs it owns: shared-record jobs (queue NOT NULL)
      -- stay out of its index, so a backlog of them costs its poll nothing.
      DROP INDEX jobs_queued;
      CREATE INDEX jobs_queued ON skill_execution_jobs (api_key_id, queued_at)
        WHERE state = 'queued' AND queue IS NULL;
      -- The recovery finds leases that lapsed; the sweeper finds what was not enqueued lately.
      CREATE INDEX jobs_leased ON skill_execution_jobs (lease_expires_at) WHERE lease_owner IS NOT NULL;
      CREATE INDEX jobs_stale_queued ON skill_execution_jobs (enqueued_at)
        WHERE state = 'queued' AND queue IS NOT NULL;
      -- The recovery ends queued executions whose deadline passed while no worker took them.
      CREATE INDEX jobs_queued_deadline ON skill_execution_jobs (deadline_at)
        WHERE state = 'queued' AND queue IS NOT NULL AND deadline_at IS NOT NULL;

      -- The rows of the shared record name this runner: it never renews a lease and its host is no
      -- host name, so the one-host recovery (which interrupts the rows of runners whose lease
      -- lapsed or whose process on this host is gone) never takes it for dead.
      INSERT INTO skillbox_runners (runner_id, pid, host, started_at, lease_expires_at)
        VALUES ('skillbox:record-store', 0, '(shared record)',
          CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), NULL);

      -- The workers serving queues, as their heartbeats report them (what \`skillbox doctor\` shows).
      CREATE TABLE skillbox_workers (
        worker_id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        queues TEXT NOT NULL,
        skills TEXT NOT NULL,
        concurrency INTEGER NOT NULL,
        running INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        last_heartbeat_at INTEGER NOT NULL
      );
    `,
  },
];

/** The newest schema version (`PRAGMA user_version`) this code knows. */
export const SQLITE_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/**
 * Brings the database to the newest schema. Runs under an immediate transaction so that
 * several processes opening a fresh file at once apply each migration exactly once.
 */
export function migrate(database: Database.Database): void {
  const pending = () => {
    const current = database.pragma("user_version", { simple: true }) as number;
    return MIGRATIONS.filter((migration) => migration.version > current);
  };
  if (pending().length === 0) return;
  database
    .transaction(() => {
      for (const migration of pending()) {
        database.exec(migration.sql);
        database.pragma(`user_version = ${migration.version}`);
      }
    })
    .immediate();
}
