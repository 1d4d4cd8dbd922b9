// Distributed executions (issue 19): an API host in this process (createDistributedHost, role
// "api") over a PostgreSQL cluster and a redis-server of the bench's own on loopback, with
// `skillbox worker` processes (the built bin, --concurrency 64) running a no-op skill loaded from
// the same folder; against a local createSkillHost() (embedded SQLite, the skill run in-process)
// measured in the same run, interleaved so that machine noise hits both alike.
// 1. Added latency: p50/p99 of sequential execute() through the API host with one worker, against
//    local execute().
// 2. Throughput at 64 in flight with one worker process and with two, against local execute() at
//    64 in flight (medians of interleaved rounds).
// 3. What an execution costs the shared parts: PostgreSQL transactions (reads included), rows
//    inserted/updated/deleted per table and WAL bytes; Redis commands (INFO commandstats, which
//    counts the commands Lua scripts run inside Redis too), and, from a MONITOR sample, the
//    commands clients sent. The figures docs/distributed.md uses to explain what bounds throughput.
// 4. CPU ms per execution of each process (API host, workers, PostgreSQL, Redis; /proc): on one
//    machine, what caps throughput once its CPUs are busy, and so what a second worker can add.
// PostgreSQL's statistics reach pg_stat_* up to 10 s late, so each phase ends with a 10 s wait.
// The cluster runs with fsync and synchronous_commit off (the test helper's settings): a commit
// costs less than on a durable production server. Nothing here asserts a speed.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { postgresBinaries, startPostgresCluster } from "../test/helpers/postgres-cluster.mjs";
import { startRedisServer } from "../test/helpers/redis-server.mjs";
import { countersPerExecution, readSettledCounters, startRedisMonitor } from "./lib/distributed-counters.mjs";
import { addCpu, childProcesses, ownCpu, readCpu } from "./lib/distributed-cpu.mjs";
import { reportDistributed } from "./lib/distributed-report.mjs";
import { startSkillboxWorker } from "./lib/distributed-workers.mjs";
import { silentLogger, temporaryDirectory } from "./lib/fixtures.mjs";
import { compareRates, concurrentRate } from "./lib/measure.mjs";

const LATENCY_COUNT = Number(process.env.BENCH_DISTRIBUTED_LATENCY_COUNT ?? 300);
const THROUGHPUT_COUNT = Number(process.env.BENCH_DISTRIBUTED_COUNT ?? 1_500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = 64;
const WORKER_CONCURRENCY = 64;
const WARM_UP = 300;
const MONITOR_COUNT = 300;
const INPUT = { value: 1 };

const missing = missingServers();
if (missing !== undefined) {
  console.log(`  skipped: ${missing} (apt-get install -y postgresql redis-server)`);
  process.exit(0);
}
const temporary = temporaryDirectory("skillbox-bench-distributed");
const cleanups = [];
try {
  await main();
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => console.error(error));
  temporary.cleanup();
}

/** What this machine lacks to run the bench (PostgreSQL from Debian's packages, redis-server and redis-cli), if anything. */
function missingServers() {
  if (postgresBinaries() === undefined) return "PostgreSQL is not installed";
  for (const command of ["redis-server", "redis-cli"]) {
    const found = spawnSync(command, ["--version"], { stdio: "ignore" });
    if (found.error !== undefined) return `${command} is not installed`;
  }
  return undefined;
}

async function main() {
  const { createSkillHost } = await import("@skillbox/core");
  const { createDistributedHost } = await import("@skillbox/distributed");
  const { loadSkills } = await import("@skillbox/loader");
  const skillsFolder = writeNoopSkill();
  const [postgres, redis] = await Promise.all([startPostgresCluster(), startRedisServer()]);
  cleanups.push(
    () => postgres.stop(),
    () => redis.stop(),
  );
  const database = postgres.createDatabase("bench");
  const target = { databaseUrl: database, redisPort: redis.port };

  const local = createSkillHost({ database: join(temporary.path, "local.db"), logger: silentLogger() });
  cleanups.push(() => local.close());
  await load(loadSkills, local, skillsFolder);
  const api = await createDistributedHost({
    database,
    queue: redis.url,
    role: "api",
    logger: silentLogger(),
  });
  cleanups.push(() => api.close({ graceMs: 1_000 }));
  await load(loadSkills, api, skillsFolder);

  const workers = [];
  const startWorker = async () => {
    const worker = await startSkillboxWorker({
      database,
      queue: redis.url,
      concurrency: WORKER_CONCURRENCY,
      skillsFolder,
      cwd: temporary.path,
    });
    cleanups.push(() => worker.stop());
    workers.push(worker);
  };
  // The servers are this process's children (`su`/`sh` before postgres when run as root).
  const children = childProcesses(process.pid);
  const serverPid = (commands) => children.find((child) => commands.includes(child.command))?.pid;
  const cpuNow = () => {
    const trees = readCpu({
      postgres: serverPid(["su", "sh", "postgres"]),
      redis: serverPid(["redis-server"]),
      ...Object.fromEntries(workers.map((worker, index) => [`worker${index}`, worker.pid])),
    });
    const workersCpu = workers.reduce((sum, _worker, index) => sum + trees[`worker${index}`], 0);
    return { api: ownCpu(), workers: workersCpu, postgres: trees.postgres, redis: trees.redis };
  };
  /** Runs `operation`, adding the CPU every part used meanwhile to `into`. */
  const withCpu = async (into, operation) => {
    const before = cpuNow();
    const result = await operation();
    addCpu(into, before, cpuNow());
    return result;
  };

  const executeOn = (host) => async () => {
    const execution = await host.executor.execute("noop", INPUT);
    if (execution.status !== "success") throw new Error(`execute() ended ${execution.status}`);
  };
  const localExecute = executeOn(local);
  const distributedExecute = executeOn(api);
  let distributedCount = 0;
  const countedDistributed = async () => {
    await distributedExecute();
    distributedCount++;
  };
  /** A phase: the shared parts' counters around it, and the CPU of the distributed side's runs. */
  const phase = () => ({ executions: 0, cpu: {}, localExecutions: 0, localCpu: {} });
  const distributedRun = (into, count, concurrency) =>
    withCpu(into.cpu, async () => {
      const start = distributedCount;
      const rate = await concurrentRate(count, concurrency, countedDistributed);
      into.executions += distributedCount - start;
      return rate;
    });
  const localRun = (into, count, concurrency) =>
    withCpu(into.localCpu, async () => {
      const rate = await concurrentRate(count, concurrency, localExecute);
      into.localExecutions += count;
      return rate;
    });

  await startWorker();
  // Warm-up: JIT, Ajv, prepared statements, the pools of connections, BullMQ's scripts.
  await concurrentRate(WARM_UP, CONCURRENCY, localExecute);
  await concurrentRate(WARM_UP, CONCURRENCY, countedDistributed);

  // 1. Sequential latency, one worker.
  const localTimes = [];
  const distributedTimes = [];
  const timed = (operation, times) => async () => {
    const start = performance.now();
    await operation();
    times.push(performance.now() - start);
  };
  const sequential = phase();
  let before = await readSettledCounters(target);
  for (let round = 0; round < ROUNDS; round++) {
    await withCpu(sequential.localCpu, () =>
      concurrentRate(LATENCY_COUNT, 1, timed(localExecute, localTimes)),
    );
    sequential.localExecutions += LATENCY_COUNT;
    await withCpu(sequential.cpu, async () => {
      const start = distributedCount;
      await concurrentRate(LATENCY_COUNT, 1, timed(countedDistributed, distributedTimes));
      sequential.executions += distributedCount - start;
    });
  }
  const afterSequential = await readSettledCounters(target);
  sequential.costs = countersPerExecution(before, afterSequential, sequential.executions);
  before = afterSequential;

  // 2. Throughput, one worker, then two (interleaved with local rounds at the same concurrency).
  // Each phase's settled reading is the next one's start: every wait for PostgreSQL's figures costs 10 s.
  const throughputPhase = async () => {
    const measured = phase();
    measured.rates = await compareRates(
      {
        local: () => localRun(measured, THROUGHPUT_COUNT, CONCURRENCY),
        distributed: () => distributedRun(measured, THROUGHPUT_COUNT, CONCURRENCY),
      },
      ROUNDS,
    );
    const after = await readSettledCounters(target);
    measured.costs = countersPerExecution(before, after, measured.executions);
    before = after;
    return measured;
  };
  const oneWorker = await throughputPhase();
  // The second worker warms up in the first of its rounds (the median sets that round aside).
  await startWorker();
  const twoWorkers = await throughputPhase();

  // What clients send Redis, from a sample under MONITOR (counted, not timed).
  const monitor = await startRedisMonitor(redis.port);
  await concurrentRate(MONITOR_COUNT, CONCURRENCY, countedDistributed);
  const monitored = await monitor.stop();

  // Every distributed execution ended once, successfully, in the shared record.
  const recorded = await api.executor.countExecutions({ status: "success" });
  const total = await api.executor.countExecutions({});
  if (recorded !== distributedCount || total !== distributedCount)
    throw new Error(`expected ${distributedCount} successful executions, found ${recorded} of ${total}`);

  reportDistributed(
    { localTimes, distributedTimes, sequential, oneWorker, twoWorkers, monitored, distributedCount },
    { ROUNDS, LATENCY_COUNT, THROUGHPUT_COUNT, CONCURRENCY, WORKER_CONCURRENCY, MONITOR_COUNT },
  );
}

/** A skills folder with one skill, `noop@1.0.0`, returning its input; its folder carries the run's tag for jiti's cache. */
function writeNoopSkill() {
  const skillsFolder = join(temporary.path, "skills");
  const folder = join(skillsFolder, `${temporary.tag}-noop`);
  mkdirSync(folder, { recursive: true });
  const manifest = {
    name: "noop",
    version: "1.0.0",
    description: "Returns its input",
    input: { type: "object" },
    handler: "./index.ts",
  };
  writeFileSync(join(folder, "skill.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(folder, "index.ts"), "export default (input: unknown): unknown => input;\n");
  return skillsFolder;
}

/** Loads the skills folder into a host, as `skillbox worker` loads it into its own. */
async function load(loadSkills, host, skillsFolder) {
  const loaded = await loadSkills({
    dirs: [skillsFolder],
    npm: false,
    registry: host.registry,
    executor: host.executor,
  });
  cleanups.push(async () => loaded.loader.close());
  if (loaded.failed.length > 0 || loaded.loaded.length !== 1)
    throw new Error(`loading the no-op skill failed: ${loaded.failed[0]?.message ?? "nothing loaded"}`);
}
