import type { ListWorkersOptions, WorkerHeartbeat, WorkerRecord } from "@skillbox/core";
import { type WorkerRow, workerOf } from "@skillbox/core/internal";
import { DATABASE_NOW } from "./postgres-clock.js";
import type { Queryable } from "./postgres-session.js";

/** Workers `listWorkers()` returns at most: a fleet larger than that is not one dashboard. */
const MAX_WORKERS = 1000;

/** Records a worker's heartbeat (one row per worker id, stamped by the database clock). */
export async function heartbeatWorker(queryable: Queryable, worker: WorkerHeartbeat): Promise<void> {
  await queryable.run(
    `INSERT INTO skillbox_workers (worker_id, host, pid, queues, skills, concurrency, running, started_at, last_heartbeat_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, ${DATABASE_NOW})
     ON CONFLICT (worker_id) DO UPDATE SET host = excluded.host, pid = excluded.pid, queues = excluded.queues,
       skills = excluded.skills, concurrency = excluded.concurrency, running = excluded.running,
       started_at = excluded.started_at, last_heartbeat_at = excluded.last_heartbeat_at`,
    [
      worker.workerId,
      worker.host,
      worker.pid,
      JSON.stringify(worker.queues),
      JSON.stringify(worker.skills),
      worker.concurrency,
      worker.running,
      worker.startedAt,
    ],
  );
}

/** Forgets a worker that stopped. */
export async function removeWorker(queryable: Queryable, workerId: string): Promise<void> {
  await queryable.run("DELETE FROM skillbox_workers WHERE worker_id = $1", [workerId]);
}

/** Forgets the workers whose last heartbeat is older than `olderThanMs` (by the database clock). */
export async function removeStaleWorkers(queryable: Queryable, olderThanMs: number): Promise<number> {
  return queryable.run(
    `DELETE FROM skillbox_workers WHERE last_heartbeat_at < ${DATABASE_NOW} - $1::bigint`,
    [Math.max(0, Math.trunc(olderThanMs))],
  );
}

/** Workers with a heartbeat in the last `withinMs` (all without it), newest heartbeat first. */
export async function listWorkers(
  queryable: Queryable,
  options: ListWorkersOptions = {},
): Promise<WorkerRecord[]> {
  const rows = await queryable.rows<WorkerRow>(
    `SELECT *, now_ms - last_heartbeat_at AS age_ms
     FROM skillbox_workers, (SELECT ${DATABASE_NOW} AS now_ms) AS clock
     WHERE $1::bigint IS NULL OR last_heartbeat_at >= now_ms - $1::bigint
     ORDER BY last_heartbeat_at DESC, worker_id LIMIT $2`,
    [options.withinMs === undefined ? null : Math.max(0, Math.trunc(options.withinMs)), MAX_WORKERS],
  );
  return rows.map(workerOf);
}
