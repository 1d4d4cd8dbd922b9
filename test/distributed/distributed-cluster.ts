import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
// Not a dependency of the workspace root (yet): the tests reach the package's sources directly.
import { createDistributedHost, type DistributedHost } from "@skillbox/distributed";
import { loadSkills } from "@skillbox/loader";
import {
  postgresBinaries,
  type RunningPostgres,
  startPostgresCluster,
} from "@skillbox/test-helpers/postgres-cluster";
import { type RunningRedis, startRedisServer } from "@skillbox/test-helpers/redis-server";
import { afterAll, afterEach, beforeAll } from "vitest";

const run = promisify(execFile);

/** The fixture skills every host loads (echo, sleep, spin, counter, counter-rerun, stamp). */
export const SKILLS = fileURLToPath(new URL("./fixtures/skills", import.meta.url));
/** Other code under `stamp@1.0.0`: a worker deployed out of step. */
export const DRIFTED_SKILLS = fileURLToPath(new URL("./fixtures/skills-drift", import.meta.url));
const SKILLBOX_BIN = fileURLToPath(new URL("../../packages/cli/bin/skillbox.mjs", import.meta.url));
/** How long a worker process may take to print its ready line on a loaded 2-core machine. */
const READY_WITHIN_MS = 30_000;
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** Options of a worker process (`skillbox worker` arguments). */
export interface WorkerProcessOptions {
  dirs?: string[];
  queues?: string[];
  concurrency?: number;
  leaseMs?: number;
}

/** A worker process this file started, stopped by the cluster's `stop()` at the latest. */
export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  /** Its id in the record, from its ready line. */
  workerId: string;
  stderr(): string;
  /** Sends `signal` (SIGKILL, SIGSTOP, SIGCONT…) without waiting. */
  signal(signal: NodeJS.Signals): void;
  /** Resolves once it exited. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGCONT (it may be stopped), SIGTERM, SIGKILL after a grace; resolves once it exited. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** One PostgreSQL cluster, one redis-server, the processes and hosts on them, and a scratch folder. */
export interface DistributedCluster {
  postgres: RunningPostgres;
  redis: RunningRedis;
  /** A folder for counter files, deleted by `stop()`. */
  scratch: string;
  /** Creates a database of its own (and a queue prefix of the same name) for one test. */
  deployment(name: string): Deployment;
  /** Stops every worker process and host started on it, then the servers. */
  stop(): Promise<void>;
  /** Stops the worker processes and hosts started so far (afterEach). */
  stopProcesses(): Promise<void>;
}

/** A database and a queue prefix: what hosts of one deployment share. */
export interface Deployment {
  database: string;
  prefix: string;
  startWorker(options?: WorkerProcessOptions): Promise<WorkerProcess>;
  /** Starts two worker processes with the same options at once; resolves once both are ready. */
  startWorkerPair(options?: WorkerProcessOptions): Promise<[WorkerProcess, WorkerProcess]>;
  /** An in-process API host that loaded the fixture skills. */
  openApiHost(): Promise<DistributedHost>;
  /** Runs `query` with psql and returns its rows, columns split on `|`. */
  sql(query: string): Promise<string[][]>;
}

/** The environment of worker processes: none of a developer's SKILLBOX_* or OTEL_* settings, warnings on stderr. */
function workerEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith("SKILLBOX_") && !name.startsWith("OTEL_")) env[name] = value;
  }
  return { ...env, NO_COLOR: "1", SKILLBOX_LOG_LEVEL: "warn" };
}

/** Fails fast, naming the fix, when the built CLI is missing or has no `worker` command. */
function checkWorkerCommand(): void {
  const help = existsSync(SKILLBOX_BIN)
    ? spawnSync(process.execPath, [SKILLBOX_BIN, "worker", "--help"], {
        encoding: "utf8",
        env: workerEnvironment(),
      })
    : undefined;
  if (help?.status !== 0 || !help.stdout.includes("--lease-ms")) {
    throw new Error("packages/cli/dist has no `skillbox worker` command: run `pnpm build` first");
  }
}

/** Starts the servers; worker processes are `skillbox worker` from the built CLI. */
async function startDistributedCluster(): Promise<DistributedCluster> {
  checkWorkerCommand();
  const [postgres, redis] = await Promise.all([startPostgresCluster(), startRedisServer()]);
  const scratch = mkdtempSync(join(tmpdir(), "skillbox-distributed-"));
  const workers = new Set<WorkerProcess>();
  const hosts = new Set<DistributedHost>();
  const psql = join(postgresBinaries() ?? "/usr/bin", "psql");

  const stopProcesses = async () => {
    await Promise.all([...workers].map((worker) => worker.stop()));
    workers.clear();
    await Promise.all([...hosts].map((host) => host.close({ graceMs: 1000 })));
    hosts.clear();
  };

  return {
    postgres,
    redis,
    scratch,
    stopProcesses,
    async stop() {
      await stopProcesses();
      await Promise.all([postgres.stop(), redis.stop()]);
      rmSync(scratch, { recursive: true, force: true });
    },
    deployment(name) {
      const database = postgres.createDatabase(name);
      const deployment: Deployment = {
        database,
        prefix: name,
        async startWorker(options = {}) {
          const worker = spawnWorker({ database, queue: redis.url, prefix: name, cwd: scratch, ...options });
          workers.add(worker.handle);
          await worker.ready;
          return worker.handle;
        },
        startWorkerPair(options = {}) {
          return Promise.all([deployment.startWorker(options), deployment.startWorker(options)]);
        },
        async openApiHost() {
          const host = await createDistributedHost({
            database,
            queue: redis.url,
            prefix: name,
            role: "api",
            logger: quiet,
          });
          hosts.add(host);
          const report = await loadSkills({
            dirs: [SKILLS],
            npm: false,
            registry: host.registry,
            executor: host.executor,
          });
          if (report.failed.length > 0)
            throw new Error(`fixture skills failed to load: ${JSON.stringify(report.failed)}`);
          return host;
        },
        async sql(query) {
          const { stdout } = await run(psql, ["-X", "-q", "-At", "-d", database, "-c", query]);
          return stdout
            .split("\n")
            .filter((line) => line !== "")
            .map((line) => line.split("|"));
        },
      };
      return deployment;
    },
  };
}

/**
 * The cluster of the calling test file: started before its tests, its worker processes and hosts
 * stopped after each test (a stopped worker gets SIGCONT first), the servers after the last one.
 * Call it at the top level of the file; read the cluster's fields inside a test.
 */
export function useDistributedCluster(): DistributedCluster {
  let cluster: DistributedCluster | undefined;
  beforeAll(async () => {
    cluster = await startDistributedCluster();
  }, 60_000);
  afterEach(async () => {
    await cluster?.stopProcesses();
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  const started = (): DistributedCluster => {
    if (cluster === undefined) throw new Error("the cluster starts in beforeAll: use it in a test");
    return cluster;
  };
  return {
    get postgres() {
      return started().postgres;
    },
    get redis() {
      return started().redis;
    },
    get scratch() {
      return started().scratch;
    },
    deployment: (name) => started().deployment(name),
    stop: () => started().stop(),
    stopProcesses: () => started().stopProcesses(),
  };
}

function spawnWorker(
  options: WorkerProcessOptions & { database: string; queue: string; prefix: string; cwd: string },
) {
  const args = [
    SKILLBOX_BIN,
    "worker",
    ...(options.dirs ?? [SKILLS]),
    "--db",
    options.database,
    "--queue",
    options.queue,
    "--prefix",
    options.prefix,
    "--queues",
    (options.queues ?? ["default"]).join(","),
    "--concurrency",
    String(options.concurrency ?? 8),
    "--lease-ms",
    String(options.leaseMs ?? 30_000),
  ];
  const child = spawn(process.execPath, args, {
    // A folder with no skillbox config and no node_modules: the worker serves the folders it is given.
    cwd: options.cwd,
    stdio: ["ignore", "pipe", "pipe"],
    env: workerEnvironment(),
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exit = once(child, "exit").then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const handle: WorkerProcess = {
    child,
    pid: child.pid ?? -1,
    workerId: "",
    stderr: () => stderr,
    signal(signal) {
      if (alive()) child.kill(signal);
    },
    exited: () => exit,
    async stop() {
      if (alive()) {
        child.kill("SIGCONT");
        child.kill("SIGTERM");
        // Not an assertion: how long a worker may take to shut down before it is killed.
        const timer = setTimeout(() => handle.signal("SIGKILL"), 10_000);
        await exit;
        clearTimeout(timer);
      }
      return exit;
    },
  };
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`no ready line within ${READY_WITHIN_MS} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, READY_WITHIN_MS);
    const check = () => {
      const match = /worker (\S+) ready/.exec(stdout);
      if (match === null) return;
      clearTimeout(timer);
      child.stdout?.off("data", check);
      handle.workerId = match[1] as string;
      resolve();
    };
    child.stdout?.on("data", check);
    void exit.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(
        new Error(
          `the worker exited (${code ?? signal}) before its ready line\nstdout:\n${stdout}\nstderr:\n${stderr}`,
        ),
      );
    });
  });
  // A worker that dies later is the test's business, not an unhandled rejection.
  ready.catch(() => {});
  return { handle, ready };
}

/** The line the counter skills append to their file for each run. */
export interface CounterLine {
  executionId: string;
  attempt: number;
  pid: number;
}

/** The JSON lines a counter (or spin) skill appended to `file` (none when it does not exist). */
export function readLines<T = Record<string, unknown>>(file: string): T[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as T);
}
