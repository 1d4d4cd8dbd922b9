import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { ExecutionRecordStore } from "@skillbox/core";
import {
  createConsoleLogger,
  createSkillHost,
  createSqliteRecordStore,
  isPostgresUrl,
  SkillboxError,
  type SkillExecutor,
  type SkillExecutorCloseOptions,
  type SkillHostOptions,
  type SkillRegistry,
} from "@skillbox/core";
import { readSqliteSchemaVersion } from "@skillbox/core/internal";
import { DistributedExecutions } from "./distributed-executions.js";
import { buildDoctorReport, type DoctorReport } from "./doctor-report.js";
import { createPostgresRecordStore } from "./postgres/postgres-record-store.js";
import { ClaimingWorker, type ClaimingWorkerOptions } from "./queue/claiming-worker.js";
import { ExecutionJobQueue } from "./queue/execution-job-queue.js";
import { RecordSweeper } from "./queue/record-sweeper.js";
import { runClaimedExecution } from "./run-claimed-execution.js";
import { skillContentHash } from "./skill-content-hash.js";
import { DEFAULT_QUEUE } from "./skill-queue-name.js";

/** Runs a host's worker takes at once unless told (`queueWorker.concurrency`). */
const DEFAULT_WORKER_CONCURRENCY = 16;

/** What a distributed host does: take requests (`api`), run executions (`worker`), or both. */
export type DistributedRole = "api" | "worker" | "both";

/** How a host's worker takes executions from the queues. */
export interface DistributedWorkerOptions {
  /** The queues it takes from (default `["default"]`). */
  queues?: readonly string[];
  /** Most executions it runs at once (default 16). */
  concurrency?: number;
  /** How long a claim lasts unrenewed, in ms (default 30 000; renewed every third of it). */
  leaseMs?: number;
  /** How often its row in `skillbox_workers` is refreshed, in ms (default 5 000). */
  heartbeatMs?: number;
  /** Its id in the record (default `<host>:<pid>:<random>`). */
  workerId?: string;
  /** Told what became of every job it took (`skillbox worker` logs the executions it ran). */
  onJob?: ClaimingWorkerOptions["onJob"];
}

/** Options of {@link createDistributedHost}. */
export interface DistributedHostOptions
  extends Omit<SkillHostOptions, "database" | "databaseOptions" | "queue"> {
  /**
   * The shared record: a `postgres://` (or `postgresql://`) URL for many hosts, or a SQLite file
   * path for several processes on one machine (`SKILLBOX_DB`).
   */
  database: string;
  /** The queue's Redis, `redis://…` (`SKILLBOX_QUEUE`); refused when it evicts keys. */
  queue: string;
  /** Prefix of every Redis key (default `skillbox`): hosts of one deployment share it. */
  prefix?: string;
  /** `api`: submit and follow only; `worker`: run only; `both` (default). */
  role?: DistributedRole;
  /** How this host's worker takes executions (roles `worker` and `both`). `worker` stays the worker threads' pool settings. */
  queueWorker?: DistributedWorkerOptions;
  /** The sweeper that heals lost jobs and expired leases (on every host by default); `false`: none here. */
  sweeper?: { intervalMs?: number; staleAfterMs?: number } | false;
  /** How often followed executions are read again besides their notices, in ms (default 1000). */
  pollIntervalMs?: number;
}

/**
 * A host of a distributed deployment: its own registry (skills loaded from this host's folders)
 * and an executor whose executions go through the shared record and the queue; with the
 * `worker` role, a worker that claims executions from the queues and runs them through this
 * executor. Load the skills, then call {@link DistributedHost.startWorker}: a worker takes no job
 * before it serves its skills.
 */
export interface DistributedHost {
  role: DistributedRole;
  registry: SkillRegistry;
  executor: SkillExecutor;
  store: ExecutionRecordStore;
  jobs: ExecutionJobQueue;
  /** This host's worker once started (roles `worker` and `both`). */
  readonly worker: ClaimingWorker | undefined;
  /** Starts taking executions from the queues (roles `worker` and `both`; a no-op for `api`). */
  startWorker(): Promise<void>;
  /** What `skillbox doctor` shows: database, Redis, queue depths, workers, problems. */
  doctor(): Promise<DoctorReport>;
  /**
   * Stops the worker (runs under way get `graceMs`, then are stopped; their leases recover them),
   * the sweeper, the executor, then the connections.
   */
  close(options?: SkillExecutorCloseOptions): Promise<void>;
}

/** Options of {@link openRecordStore}. */
export interface OpenRecordStoreOptions {
  /**
   * Bring the schema up to date (default true). `false` (`skillbox doctor`, which only looks):
   * nothing is created or changed; a PostgreSQL store is returned as it is (its
   * `schemaVersion()` tells whether it needs migration), and a SQLite file that does not exist
   * or needs migration is refused with `DATABASE_ERROR` (opening one migrates it).
   */
  migrate?: boolean;
  /**
   * Most connections of a PostgreSQL store's pool (default 10). A worker host needs one per run
   * under way and a few more: {@link createDistributedHost} sizes it from the worker's concurrency.
   */
  poolMax?: number;
}

/** Opens the shared record the `database` option names and brings its schema up to date (unless told not to). */
export async function openRecordStore(
  database: string,
  options: OpenRecordStoreOptions = {},
): Promise<ExecutionRecordStore> {
  const migrate = options.migrate ?? true;
  if (!migrate && !isPostgresUrl(database)) refuseSqliteToMigrate(database);
  const store = isPostgresUrl(database)
    ? createPostgresRecordStore({
        url: database,
        applicationName: `skillbox ${hostname()}`,
        ...(options.poolMax === undefined ? {} : { pool: { max: options.poolMax } }),
      })
    : createSqliteRecordStore({ path: database });
  try {
    if (migrate) await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

/** Throws unless the SQLite file exists with the newest schema: opening it would create or migrate it. */
function refuseSqliteToMigrate(path: string): void {
  const schema = readSqliteSchemaVersion(path);
  if (schema === undefined) {
    throw new SkillboxError(
      "DATABASE_ERROR",
      `There is no Skillbox database at ${path}: nothing was recorded there yet (check SKILLBOX_DB)`,
    );
  }
  if (schema.applied < schema.latest) {
    throw new SkillboxError(
      "DATABASE_ERROR",
      `The database at ${path} needs migration: its schema is at version ${schema.applied}, this Skillbox needs ${schema.latest}; start a host of this version (it migrates on start)`,
      { data: { schemaVersion: schema.applied, latestSchemaVersion: schema.latest } },
    );
  }
}

function checkedRole(role: unknown): DistributedRole {
  if (role === undefined) return "both";
  if (role === "api" || role === "worker" || role === "both") return role;
  throw new SkillboxError(
    "CONFIG_INVALID",
    `createDistributedHost: \`role\` must be "api", "worker" or "both", got ${JSON.stringify(role)}`,
  );
}

/**
 * Connects a host to a distributed deployment: opens (and migrates) the shared record, connects
 * to the queue's Redis (refusing one with an evicting `maxmemory-policy`), and builds the
 * registry and executor. Executions submitted here are recorded `queued` and dispatched;
 * `execute()`, `wait()`, events, cancels and decisions work on any host.
 */
export async function createDistributedHost(options: DistributedHostOptions): Promise<DistributedHost> {
  const role = checkedRole(options.role);
  const logger = options.logger ?? createConsoleLogger();
  const store = await openRecordStore(options.database, { poolMax: poolMaxOf(role, options.queueWorker) });
  const cleanups: (() => Promise<void>)[] = [() => store.close()];
  const closeAll = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const jobs = await ExecutionJobQueue.open({ url: options.queue, logger, ...prefixOf(options) });
    cleanups.push(() => jobs.close());
    const backend = new DistributedExecutions({
      store,
      dispatcher: jobs,
      logger,
      inputHashKey: await store.inputHashKey(),
      ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
    });
    await backend.start();
    cleanups.push(() => backend.close());
    const {
      database: _database,
      queue: _queue,
      prefix: _prefix,
      role: _role,
      queueWorker: workerOptions,
      sweeper: sweeperOptions,
      pollIntervalMs: _poll,
      ...hostOptions
    } = options;
    // The registry is this host's own (its folders), in memory: the shared record holds executions only.
    const local = createSkillHost({ ...hostOptions, logger, database: ":memory:", queue: false, backend });
    cleanups.push(() => local.close());
    const sweeper =
      sweeperOptions === false
        ? undefined
        : new RecordSweeper({ store, queue: jobs, logger, ...sweeperOptions });
    sweeper?.start();
    if (sweeper !== undefined) cleanups.push(() => sweeper.close());
    const workerId = workerOptions?.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    let worker: ClaimingWorker | undefined;
    /** The start under way: a second call waits for it; a failed one is forgotten so a later call retries. */
    let workerStart: Promise<void> | undefined;
    let closing: Promise<void> | undefined;
    /** Builds and starts this host's worker; a worker whose start failed is closed and forgotten. */
    const startClaimingWorker = async (): Promise<void> => {
      const starting = new ClaimingWorker({
        url: options.queue,
        store,
        queues: workerOptions?.queues ?? [DEFAULT_QUEUE],
        concurrency: workerOptions?.concurrency ?? DEFAULT_WORKER_CONCURRENCY,
        workerId,
        logger,
        ...prefixOf(options),
        ...(workerOptions?.leaseMs === undefined ? {} : { leaseMs: workerOptions.leaseMs }),
        ...(workerOptions?.heartbeatMs === undefined ? {} : { heartbeatMs: workerOptions.heartbeatMs }),
        ...(workerOptions?.onJob === undefined ? {} : { onJob: workerOptions.onJob }),
        run: (claim, context) =>
          runClaimedExecution(claim, {
            executor: local.executor,
            workerId,
            signal: context.signal,
            reportProgress: context.reportProgress,
          }),
        describe: () =>
          local.registry.list().map((skill) => ({
            name: skill.name,
            version: skill.version,
            contentHash: skillContentHash(skill),
          })),
      });
      worker = starting;
      try {
        await starting.start();
      } catch (error) {
        worker = undefined;
        await starting.close().catch(() => undefined);
        throw error;
      }
    };
    return {
      role,
      registry: local.registry,
      executor: local.executor,
      store,
      jobs,
      get worker() {
        return worker;
      },
      startWorker() {
        if (role === "api") return Promise.resolve();
        workerStart ??= startClaimingWorker().catch((error: unknown) => {
          workerStart = undefined;
          throw error;
        });
        return workerStart;
      },
      doctor: () =>
        buildDoctorReport({
          store,
          redis: () => jobs.serverInfo(),
          depth: (queue) => jobs.depth(queue),
          queues: workerOptions?.queues ?? [DEFAULT_QUEUE],
        }),
      close(closeOptions = {}) {
        closing ??= (async () => {
          if (worker !== undefined)
            await worker.close(closeOptions.graceMs === undefined ? {} : { graceMs: closeOptions.graceMs });
          await closeAll();
        })();
        return closing;
      },
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/**
 * Connections of the record's pool beyond one per run: claims of the next jobs, the worker's
 * heartbeat and clock, the sweeper, followers' reads and the API's requests.
 */
const SPARE_CONNECTIONS = 6;
/** A PostgreSQL store's own default pool size, the least a host gets. */
const DEFAULT_POOL_MAX = 10;

/**
 * The record's pool size: a worker's runs each renew, report progress and commit on it, so a
 * pool smaller than the concurrency makes them wait for connections (and a renewal that waits
 * past the lease loses the run); an API host keeps the store's default.
 */
function poolMaxOf(role: DistributedRole, worker: DistributedWorkerOptions | undefined): number | undefined {
  if (role === "api") return undefined;
  const concurrency = worker?.concurrency ?? DEFAULT_WORKER_CONCURRENCY;
  // A concurrency that is no count is refused by the worker, with a message that names it.
  if (!Number.isInteger(concurrency) || concurrency < 1) return undefined;
  return Math.min(1000, Math.max(DEFAULT_POOL_MAX, concurrency + SPARE_CONNECTIONS));
}

function prefixOf(options: { prefix?: string }): { prefix?: string } {
  return options.prefix === undefined ? {} : { prefix: options.prefix };
}
