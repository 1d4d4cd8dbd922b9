import type { ExecutionRecordStore, WorkerRecord } from "@skillbox/core";

/** How many jobs one queue holds, by BullMQ state. */
export interface QueueDepth {
  queue: string;
  waiting: number;
  active: number;
  delayed: number;
}

/** What `skillbox doctor` shows of a distributed deployment. */
export interface DoctorReport {
  database: {
    dialect: "sqlite" | "postgres";
    reachable: boolean;
    error?: string;
    clockSkewMs?: number;
    /** The schema version applied to the database, and the newest this Skillbox knows. */
    schemaVersion?: number;
    latestSchemaVersion?: number;
    /** How full PostgreSQL's NOTIFY queue is, from 0 to 1 (`pg_notification_queue_usage()`). */
    notificationQueueUsage?: number;
  };
  redis: { reachable: boolean; version?: string; maxmemoryPolicy?: string; error?: string };
  queues: QueueDepth[];
  workers: WorkerRecord[];
  /** Skills (`name@version`) whose workers report different content hashes: a partial deploy. */
  hashConflicts: { skill: string; hashes: string[] }[];
  /** Problems an operator must fix, each a sentence naming the fix; empty when healthy. */
  problems: string[];
}

/** What the doctor reads of a store besides the record contract, where the store can tell it. */
export interface DoctorStoreChecks {
  /** The schema version applied and the newest the code knows (the PostgreSQL store tells it). */
  schemaVersion?(): Promise<{ applied: number; latest: number }>;
  /** How full the NOTIFY queue is, from 0 to 1 (the PostgreSQL store tells it). */
  notificationQueueUsage?(): Promise<number>;
}

/** NOTIFY queue usage above which the doctor reports a problem (at 1 every notifying commit fails). */
const NOTIFICATION_QUEUE_WARNING = 0.5;

/** What {@link buildDoctorReport} reads from. */
export interface DoctorSources {
  /** What the report reads of the shared record (a stand-in that rejects, when it could not be opened). */
  store: Pick<ExecutionRecordStore, "dialect" | "now" | "listWorkers"> & DoctorStoreChecks;
  /** The Redis server's version and eviction policy, or why it cannot be reached. */
  redis(): Promise<{ version: string; maxmemoryPolicy: string }>;
  /** The depth of each queue the workers (and `queues`) name. */
  depth(queue: string): Promise<QueueDepth>;
  /** Queues to report besides those the workers serve (default `["default"]`). */
  queues?: readonly string[];
  /** Heartbeats older than this count as a dead worker, in ms (default 30 000). */
  staleAfterMs?: number;
}

/**
 * Looks at a distributed deployment the way an operator would: the database answers (and how
 * far this host's clock is from it), Redis answers with `maxmemory-policy noeviction`, the depth
 * of every queue, every worker with its heartbeat age and loaded skills, and skills whose
 * workers disagree on the code (their content hashes differ). Each failed check becomes a
 * problem sentence; nothing here throws for an unreachable part.
 */
export async function buildDoctorReport(sources: DoctorSources): Promise<DoctorReport> {
  const problems: string[] = [];
  const database: DoctorReport["database"] = { dialect: sources.store.dialect, reachable: false };
  let workers: WorkerRecord[] = [];
  try {
    const before = Date.now();
    const now = await sources.store.now();
    database.reachable = true;
    database.clockSkewMs = Math.round(now - (before + Date.now()) / 2);
    // An old schema may lack the tables read below: it is reported, never migrated here.
    if (await schemaIsCurrent(sources.store, database, problems)) {
      workers = await sources.store.listWorkers({ withinMs: 24 * 60 * 60 * 1000 });
      await checkNotificationQueue(sources.store, database, problems);
    }
  } catch (error) {
    database.error = (error as Error).message;
    problems.push(
      `The database does not answer (${database.error}): check SKILLBOX_DB and that the server is up`,
    );
  }
  const redis: DoctorReport["redis"] = { reachable: false };
  try {
    const answer = await sources.redis();
    Object.assign(redis, { reachable: true, ...answer });
    if (answer.maxmemoryPolicy !== "noeviction") {
      problems.push(
        `Redis evicts keys (maxmemory-policy ${answer.maxmemoryPolicy}): queued jobs can vanish; set \`maxmemory-policy noeviction\``,
      );
    }
  } catch (error) {
    redis.error = (error as Error).message;
    problems.push(`Redis does not answer (${redis.error}): check SKILLBOX_QUEUE and that the server is up`);
  }
  const staleAfterMs = sources.staleAfterMs ?? 30_000;
  for (const worker of workers) {
    if (worker.heartbeatAgeMs > staleAfterMs) {
      problems.push(
        `Worker ${worker.workerId} on ${worker.host} (pid ${worker.pid}) has not sent a heartbeat for ${Math.round(worker.heartbeatAgeMs / 1000)} s: it stopped or cannot reach the database`,
      );
    }
  }
  const queueNames = [
    ...new Set([...(sources.queues ?? ["default"]), ...workers.flatMap((worker) => worker.queues)]),
  ].sort();
  const queues: QueueDepth[] = [];
  if (redis.reachable) {
    for (const queue of queueNames) queues.push(await sources.depth(queue));
    for (const depth of queues) {
      const served = workers.some(
        (worker) => worker.heartbeatAgeMs <= staleAfterMs && worker.queues.includes(depth.queue),
      );
      if (!served && depth.waiting + depth.delayed > 0) {
        problems.push(
          `Queue ${depth.queue} holds ${depth.waiting + depth.delayed} job(s) and no live worker takes it: start \`skillbox worker --queues ${depth.queue}\``,
        );
      }
    }
  }
  const hashConflicts = conflictingHashes(workers.filter((worker) => worker.heartbeatAgeMs <= staleAfterMs));
  for (const conflict of hashConflicts) {
    problems.push(
      `Workers disagree on the code of ${conflict.skill} (${conflict.hashes.length} content hashes): deploy the same skill folders everywhere`,
    );
  }
  return { database, redis, queues, workers, hashConflicts, problems };
}

/** Records the schema version; false (with a problem) when the database needs migration first. */
async function schemaIsCurrent(
  store: DoctorStoreChecks,
  database: DoctorReport["database"],
  problems: string[],
): Promise<boolean> {
  if (typeof store.schemaVersion !== "function") return true;
  const { applied, latest } = await store.schemaVersion();
  database.schemaVersion = applied;
  database.latestSchemaVersion = latest;
  if (applied < latest) {
    problems.push(
      `The database needs migration: its schema is at version ${applied}, this Skillbox needs ${latest}; start a host or worker of this version (it migrates on start), then run the doctor again`,
    );
    return false;
  }
  if (applied > latest) {
    problems.push(
      `The database's schema (version ${applied}) is newer than this Skillbox knows (${latest}): upgrade this host to the version the others run`,
    );
  }
  return true;
}

/** Records how full the NOTIFY queue is; a problem above {@link NOTIFICATION_QUEUE_WARNING}. */
async function checkNotificationQueue(
  store: DoctorStoreChecks,
  database: DoctorReport["database"],
  problems: string[],
): Promise<void> {
  if (typeof store.notificationQueueUsage !== "function") return;
  const usage = await store.notificationQueueUsage();
  database.notificationQueueUsage = usage;
  if (usage > NOTIFICATION_QUEUE_WARNING) {
    problems.push(
      `PostgreSQL's NOTIFY queue is ${Math.round(usage * 100)} % full: a listening session stopped reading its notices (a stopped or hung process); find it in pg_stat_activity (application_name ending in ":listener", LISTEN) and end it with pg_terminate_backend — when the queue is full, every commit that notifies fails`,
    );
  }
}

function conflictingHashes(workers: readonly WorkerRecord[]): { skill: string; hashes: string[] }[] {
  const bySkill = new Map<string, Set<string>>();
  for (const worker of workers) {
    for (const skill of worker.skills) {
      const key = `${skill.name}@${skill.version}`;
      let hashes = bySkill.get(key);
      if (hashes === undefined) {
        hashes = new Set();
        bySkill.set(key, hashes);
      }
      hashes.add(skill.contentHash);
    }
  }
  return [...bySkill]
    .filter(([, hashes]) => hashes.size > 1)
    .map(([skill, hashes]) => ({ skill, hashes: [...hashes].sort() }))
    .sort((a, b) => a.skill.localeCompare(b.skill));
}
