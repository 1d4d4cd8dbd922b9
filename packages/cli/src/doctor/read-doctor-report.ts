import type { ExecutionRecordStore } from "@skillbox/core";
import { isPostgresUrl, SkillboxError } from "@skillbox/core";
import {
  buildDoctorReport,
  type DoctorReport,
  type DoctorSources,
  ExecutionJobQueue,
  openRecordStore,
} from "@skillbox/distributed";
import type { ResolvedConfig } from "../config/load-config.js";

const SILENT = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/**
 * A store that does not answer, for a report on a database that could not be opened: the report
 * then says so as a problem (with the queue and Redis still checked) instead of failing whole.
 */
function unreachableStore(database: string, error: unknown): DoctorSources["store"] {
  const rejected = () => Promise.reject(error);
  const dialect = isPostgresUrl(database) ? "postgres" : "sqlite";
  const data =
    error instanceof SkillboxError ? (error.data as Record<string, unknown> | undefined) : undefined;
  const applied = data?.schemaVersion;
  const latest = data?.latestSchemaVersion;
  if (typeof applied === "number" && typeof latest === "number") {
    // A SQLite file that needs migration answers; it is not opened (that would migrate it). Its
    // clock is this machine's.
    return {
      dialect,
      now: () => Promise.resolve(Date.now()),
      listWorkers: rejected,
      schemaVersion: () => Promise.resolve({ applied, latest }),
    };
  }
  return { dialect, now: rejected, listWorkers: rejected };
}

/**
 * What `skillbox doctor` shows of the configured deployment (see `buildDoctorReport`, which
 * `DistributedHost.doctor()` also uses). It reads the parts itself rather than opening a
 * distributed host: a host refuses an evicting or unreachable Redis and an unreachable database
 * at start, and those are exactly what the doctor must report rather than fail on.
 */
export async function readDoctorReport(config: ResolvedConfig & { queue: string }): Promise<DoctorReport> {
  let store: DoctorSources["store"];
  let opened: ExecutionRecordStore | undefined;
  try {
    // The doctor only looks: a database that needs migration is reported, not migrated, and a
    // SQLite file that is not there is not created.
    opened = await openRecordStore(config.database, { migrate: false });
    store = opened;
  } catch (error) {
    store = unreachableStore(config.database, error);
  }
  const jobs = new ExecutionJobQueue({
    url: config.queue,
    logger: SILENT,
    ...(config.queuePrefix === undefined ? {} : { prefix: config.queuePrefix }),
  });
  try {
    return await buildDoctorReport({
      store,
      redis: () => jobs.serverInfo(),
      depth: (queue) => jobs.depth(queue),
      queues: config.worker.queues,
    });
  } finally {
    await jobs.close();
    await opened?.close();
  }
}
