// The tables and the key-figures line of distributed.bench.mjs, from what it measured.
import { cpus, loadavg } from "node:os";
import { formatRowWrites, topCommands } from "./distributed-counters.mjs";
import { formatMs, printTable } from "./fixtures.mjs";
import { formatRate, median, percentile } from "./measure.mjs";

/**
 * Prints the latency, throughput, per-execution and CPU tables, then one line of key figures.
 * `results`: what the bench measured; `settings`: its counts (rounds, calls, concurrency).
 */
export function reportDistributed(results, settings) {
  const { localTimes, distributedTimes, sequential, oneWorker, twoWorkers, monitored, distributedCount } =
    results;
  const { ROUNDS, LATENCY_COUNT, THROUGHPUT_COUNT, CONCURRENCY, WORKER_CONCURRENCY, MONITOR_COUNT } =
    settings;
  const localP50 = percentile(localTimes, 50);
  const localP99 = percentile(localTimes, 99);
  const distributedP50 = percentile(distributedTimes, 50);
  const distributedP99 = percentile(distributedTimes, 99);
  // Two significant figures below 0.1x: the distributed path runs at a few thousandths of local.
  const ratio = (value, baseline) => {
    const quotient = value / baseline;
    return `${quotient < 0.1 ? quotient.toPrecision(2) : quotient.toFixed(2)}x`;
  };
  const cores = cpus().length;
  console.log(
    "Added latency: sequential execute() of a no-op skill through an API host with one `skillbox worker` process vs local execute() (SQLite)",
  );
  printTable([
    ["", "p50", "p99", "median of rounds' means", "executions"],
    [
      "local execute() (baseline)",
      formatMs(localP50),
      formatMs(localP99),
      formatMs(median(roundMeans(localTimes, ROUNDS, LATENCY_COUNT))),
      localTimes.length,
    ],
    [
      "distributed, 1 worker",
      formatMs(distributedP50),
      formatMs(distributedP99),
      formatMs(median(roundMeans(distributedTimes, ROUNDS, LATENCY_COUNT))),
      distributedTimes.length,
    ],
    ["added", `+${formatMs(distributedP50 - localP50)}`, `+${formatMs(distributedP99 - localP99)}`, "", ""],
    ["ratio", ratio(distributedP50, localP50), ratio(distributedP99, localP99), "", ""],
  ]);
  console.log(`  (${ROUNDS} interleaved rounds of ${LATENCY_COUNT} calls one after another on each side)`);

  const one = oneWorker.rates;
  const two = twoWorkers.rates;
  console.log(
    `\nThroughput: ${THROUGHPUT_COUNT.toLocaleString("en-US")} executions a round, ${CONCURRENCY} in flight, workers at --concurrency ${WORKER_CONCURRENCY}`,
  );
  printTable([
    ["", "executions/s", "vs local (same rounds)", "vs 1 worker"],
    ["local execute() (baseline), rounds beside 1 worker", formatRate(one.local), "1.00x", ""],
    [
      "distributed, 1 worker process",
      formatRate(one.distributed),
      ratio(one.distributed, one.local),
      "1.00x",
    ],
    ["local execute() (baseline), rounds beside 2 workers", formatRate(two.local), "1.00x", ""],
    [
      "distributed, 2 worker processes",
      formatRate(two.distributed),
      ratio(two.distributed, two.local),
      ratio(two.distributed, one.distributed),
    ],
  ]);
  console.log(
    `  (medians of ${ROUNDS} interleaved rounds; the API host, the workers and both servers share this machine's ${cores} CPUs)`,
  );

  console.log("\nPer distributed execution: PostgreSQL (rows inserted/updated/deleted per table) and Redis");
  const costRow = (label, { costs }) => [
    label,
    costs.transactions.toFixed(1),
    formatRowWrites(costs, "skill_executions"),
    formatRowWrites(costs, "skill_execution_jobs"),
    formatRowWrites(costs, "skill_execution_events"),
    costs.rowWrites.toFixed(1),
    `${(costs.walBytes / 1024).toFixed(1)} kB`,
    costs.redisCommands.toFixed(1),
    costs.redisScripts.toFixed(1),
  ];
  printTable([
    [
      "",
      "PG transactions",
      "skill_executions",
      "skill_execution_jobs",
      "skill_execution_events",
      "row writes, all tables",
      "WAL",
      "Redis commands",
      "of which scripts",
    ],
    costRow("sequential, 1 worker", sequential),
    costRow(`${CONCURRENCY} in flight, 1 worker`, oneWorker),
    costRow(`${CONCURRENCY} in flight, 2 workers`, twoWorkers),
  ]);
  const sentTotal = Object.values(monitored.sent).reduce((sum, calls) => sum + calls, 0);
  const sentTop = Object.entries(monitored.sent)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([name, calls]) => `${name} ${(calls / MONITOR_COUNT).toFixed(1)}`)
    .join(", ");
  console.log(
    `  Redis commands by name, ${CONCURRENCY} in flight, 1 worker: ${topCommands(oneWorker.costs)}`,
  );
  console.log(
    `  sent by clients (MONITOR, ${MONITOR_COUNT} executions, ${CONCURRENCY} in flight, 2 workers): ${(sentTotal / MONITOR_COUNT).toFixed(1)} commands per execution ` +
      `(${sentTop}); ${(monitored.insideScripts / MONITOR_COUNT).toFixed(1)} more run inside scripts`,
  );
  console.log(
    "  (PG transactions: committed + rolled back, reads included: the API host's follow-up reads, each worker's read-back for its log line, heartbeats; " +
      "rows from pg_stat_user_tables; Redis commands: INFO commandstats, the commands Lua scripts run included)",
  );

  console.log("\nCPU ms per execution, by process (/proc utime + stime over the measured rounds)");
  const cpuRow = (label, { cpu, executions }) => {
    const total = cpu.api + cpu.workers + cpu.postgres + cpu.redis;
    return [
      label,
      (cpu.api / executions).toFixed(2),
      (cpu.workers / executions).toFixed(2),
      (cpu.postgres / executions).toFixed(2),
      (cpu.redis / executions).toFixed(2),
      (total / executions).toFixed(2),
      formatRate((cores * 1000 * executions) / total),
    ];
  };
  const localRow = (label, { localCpu, localExecutions }) => [
    label,
    (localCpu.api / localExecutions).toFixed(2),
    "",
    "",
    "",
    (localCpu.api / localExecutions).toFixed(2),
    formatRate((cores * 1000 * localExecutions) / localCpu.api),
  ];
  printTable([
    ["", "API host / local host", "worker(s)", "PostgreSQL", "Redis", "total", `ceiling on ${cores} CPUs`],
    localRow(`local execute(), ${CONCURRENCY} in flight`, oneWorker),
    cpuRow("distributed, sequential, 1 worker", sequential),
    cpuRow(`distributed, ${CONCURRENCY} in flight, 1 worker`, oneWorker),
    cpuRow(`distributed, ${CONCURRENCY} in flight, 2 workers`, twoWorkers),
  ]);
  console.log(
    `  ("ceiling": executions/s if every CPU did nothing else; the local host's ceiling assumes one process per CPU)`,
  );
  console.log(
    `  (${distributedCount.toLocaleString("en-US")} distributed executions, all recorded once as success; ${cores} CPUs, load average ${loadavg()[0].toFixed(1)} at the end, Node ${process.version}; PostgreSQL with fsync/synchronous_commit off)`,
  );
  const perExecution = oneWorker.costs;
  const totalCpu = (cpu, executions) => (cpu.api + cpu.workers + cpu.postgres + cpu.redis) / executions;
  console.log(
    `  key figures: added latency p50 +${formatMs(distributedP50 - localP50)}, p99 +${formatMs(distributedP99 - localP99)}; ` +
      `${CONCURRENCY} in flight: local ${formatRate(median([one.local, two.local]))}, 1 worker ${formatRate(one.distributed)} (${ratio(one.distributed, one.local)}), ` +
      `2 workers ${formatRate(two.distributed)} (${ratio(two.distributed, two.local)}, ${ratio(two.distributed, one.distributed)} of 1); ` +
      `per execution: ${perExecution.transactions.toFixed(1)} PG transactions, ${perExecution.rowWrites.toFixed(1)} row writes, ` +
      `${(perExecution.walBytes / 1024).toFixed(1)} kB WAL, ${perExecution.redisCommands.toFixed(1)} Redis commands (${(sentTotal / MONITOR_COUNT).toFixed(1)} sent), ` +
      `${totalCpu(oneWorker.cpu, oneWorker.executions).toFixed(2)} CPU ms`,
  );
}

/** The mean of each round's calls (`times` holds `rounds` rounds of `perRound`, in order). */
function roundMeans(times, rounds, perRound) {
  const means = [];
  for (let round = 0; round < rounds; round++) {
    const slice = times.slice(round * perRound, (round + 1) * perRound);
    means.push(slice.reduce((sum, time) => sum + time, 0) / slice.length);
  }
  return means;
}
