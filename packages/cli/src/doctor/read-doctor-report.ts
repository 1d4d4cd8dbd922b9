import type { ExecutionRecordStore } from "@skillbox/core";
import {
  buildDoctorReport,
  type DoctorReport,
  ExecutionJobQueue,
  openRecordStore,
} from "@skillbox/distributed";
import { isPostgresUrl } from "../config/deployment-urls.js";
import type { ResolvedConfig } from "../config/load-config.js";

const SILENT = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/**
 * A store that does not answer, for a report on a database that could not be opened: the report
 * then says so as a problem (with the queue and Redis still checked) instead of failing whole.
 */
function unreachableStore(database: string, error: unknown): ExecutionRecordStore {
  const rejected = () => Promise.reject(error);
  return {
    dialect: isPostgresUrl(database) ? "postgres" : "sqlite",
    now: rejected,
    listWorkers: rejected,
  } as unknown as ExecutionRecordStore;
}

/**
 * What `skillbox doctor` shows of the configured deployment (see `buildDoctorReport`, which
 * `DistributedHost.doctor()` also uses). It reads the parts itself rather than opening a
 * distributed host: a host refuses an evicting or unreachable Redis and an unreachable database
 * at start, and those are exactly what the doctor must report rather than fail on.
 */
export async function readDoctorReport(config: ResolvedConfig & { queue: string }): Promise<DoctorReport> {
  let store: ExecutionRecordStore;
  let ownsStore = true;
  try {
    store = await openRecordStore(config.database);
  } catch (error) {
    store = unreachableStore(config.database, error);
    ownsStore = false;
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
    if (ownsStore) await store.close();
  }
}
