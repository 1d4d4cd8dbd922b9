// The floor for a durable audit row: the same INSERT (at start) and UPDATE (at finish) the
// executor writes, with plain better-sqlite3 on a database with the same schema and pragmas.
import { openDatabase } from "@skillbox/core";
import { v7 as timeOrderedUuid } from "uuid";

/** Opens a fresh Skillbox database at `path` and returns statements writing raw audit rows. */
export function createRawAuditFloor(path) {
  const database = openDatabase({ path });
  const runner = database
    .prepare(
      "INSERT INTO skillbox_runners (runner_id, pid, host, started_at) VALUES ('bench', ?, 'bench', ?)",
    )
    .run(process.pid, Date.now()).lastInsertRowid;
  const insert = database.prepare(
    `INSERT INTO skill_executions (id, skill_id, skill_name, skill_version, api_key_id, session_id,
       parent_execution_id, idempotency_key, input, status, attempts, created_at, runner)
     VALUES (?, 'skill', 'noop', '1.0.0', 'public', NULL, NULL, NULL, ?, 'running', 0, ?, ?)`,
  );
  const update = database.prepare(
    `UPDATE skill_executions SET status = 'success', output = ?, attempts = 1, duration_ms = 0, finished_at = ?
     WHERE rowid = ?`,
  );
  // Time-ordered ids, as the executor mints them, so both write the same b-trees.
  const start = (inputJson) => insert.run(timeOrderedUuid(), inputJson, Date.now(), runner).lastInsertRowid;
  const finish = (rowid, outputJson) => update.run(outputJson, Date.now(), rowid);
  return {
    /** Writes the `running` row (autocommit); returns its rowid. */
    start,
    /** Writes the final state (autocommit). */
    finish,
    /** Both in batches, one immediate transaction each, as the group commit does. */
    startBatch: (inputJsons) => database.transaction(() => inputJsons.map(start)).immediate(),
    finishBatch: (rowids, outputJson) =>
      database
        .transaction(() => {
          for (const rowid of rowids) finish(rowid, outputJson);
        })
        .immediate(),
    close: () => database.close(),
  };
}
