// PostgreSQL's and Redis' own cumulative counters, read before and after a run, so that a run
// becomes "writes and commands per execution": the figures that bound a distributed deployment's
// throughput. Read with psql and redis-cli (installed with the servers), so the bench needs no
// client library of its own and its reads go through connections of their own.
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { postgresBinaries } from "../../test/helpers/postgres-cluster.mjs";

const END_MARK = "skillbox-bench-monitor-end";

/** Lua script invocations: one round trip each, whatever the script calls inside. */
const SCRIPT_COMMANDS = new Set(["eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"]);

const COUNTERS_QUERY = `SELECT json_build_object(
  'transactions', (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()),
  'walBytes', pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0'),
  'tables', (SELECT json_object_agg(relname, json_build_object(
      'inserted', n_tup_ins, 'updated', n_tup_upd, 'deleted', n_tup_del)) FROM pg_stat_user_tables)
)`;

/**
 * Reads the counters of the database at `databaseUrl` (its transactions, committed or not: reads
 * are transactions too; its tables' inserted/updated/deleted rows; the cluster's WAL position) and
 * of the Redis on `redisPort` (`INFO commandstats`: calls per command).
 */
function readCounters({ databaseUrl, redisPort }) {
  const psql = join(postgresBinaries(), "psql");
  const postgres = JSON.parse(
    execFileSync(psql, ["-d", databaseUrl, "-At", "-c", COUNTERS_QUERY], { encoding: "utf8" }),
  );
  const info = execFileSync(
    "redis-cli",
    ["-h", "127.0.0.1", "-p", String(redisPort), "INFO", "commandstats"],
    {
      encoding: "utf8",
    },
  );
  const commands = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) commands[match[1]] = Number(match[2]);
  return { ...postgres, walBytes: Number(postgres.walBytes), commands };
}

/**
 * How long PostgreSQL may sit on a backend's statistics: a backend reports them at the end of a
 * transaction at most once a second, and one that goes idle within that second reports them
 * after PGSTAT_IDLE_INTERVAL, 10 s (src/backend/utils/activity/pgstat.c, PostgreSQL 15+).
 */
const STATISTICS_IDLE_INTERVAL_MS = 10_000;

/**
 * Reads the counters once every idle backend has reported what it did: the end of a run shows
 * up to 10 s late otherwise. The deployment's heartbeats keep it writing a little meanwhile (a
 * few transactions a second, against thousands of executions).
 */
export async function readSettledCounters(target) {
  await delay(STATISTICS_IDLE_INTERVAL_MS + 500);
  return readCounters(target);
}

/** What happened between two reads, per execution (`count` of them ran in between). */
export function countersPerExecution(before, after, count) {
  const per = (value) => value / count;
  const tables = {};
  let rowWrites = 0;
  for (const [name, counts] of Object.entries(after.tables ?? {})) {
    const earlier = before.tables?.[name] ?? { inserted: 0, updated: 0, deleted: 0 };
    const delta = {
      inserted: per(counts.inserted - earlier.inserted),
      updated: per(counts.updated - earlier.updated),
      deleted: per(counts.deleted - earlier.deleted),
    };
    tables[name] = delta;
    rowWrites += delta.inserted + delta.updated + delta.deleted;
  }
  const commands = {};
  let redisCommands = 0;
  let redisScripts = 0;
  for (const [name, calls] of Object.entries(after.commands)) {
    const delta = per(calls - (before.commands[name] ?? 0));
    if (delta <= 0) continue;
    commands[name] = delta;
    redisCommands += delta;
    if (SCRIPT_COMMANDS.has(name)) redisScripts += delta;
  }
  return {
    transactions: per(after.transactions - before.transactions),
    walBytes: per(after.walBytes - before.walBytes),
    rowWrites,
    tables,
    redisCommands,
    redisScripts,
    commands,
  };
}

/** `inserted/updated/deleted` rows of one table per execution, as `1/2/1`. */
export function formatRowWrites(perExecution, table) {
  const counts = perExecution.tables[table];
  if (counts === undefined) return "-";
  const format = (value) =>
    Math.abs(value - Math.round(value)) < 0.05 ? String(Math.round(value)) : value.toFixed(2);
  return `${format(counts.inserted)}/${format(counts.updated)}/${format(counts.deleted)}`;
}

/** The `limit` Redis commands with the most calls per execution, as `evalsha 4.0, bzpopmin 1.2`. */
export function topCommands(perExecution, limit = 6) {
  return Object.entries(perExecution.commands)
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([name, calls]) => `${name} ${calls.toFixed(1)}`)
    .join(", ");
}

/**
 * Follows `MONITOR` on the Redis at `redisPort` until `stop()`, which resolves with the commands
 * clients sent (by name; each one a request on the wire, several of them in one round trip when
 * a client pipelines) and how many commands Lua scripts ran inside Redis. Slows Redis down: for
 * a sample that is counted, not timed.
 */
export async function startRedisMonitor(redisPort) {
  const child = spawn("redis-cli", ["-h", "127.0.0.1", "-p", String(redisPort), "MONITOR"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  const sent = {};
  let insideScripts = 0;
  let buffer = "";
  let started;
  const firstLine = new Promise((resolve) => {
    started = resolve;
  });
  let ended;
  const lastLine = new Promise((resolve) => {
    ended = resolve;
  });
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    buffer += chunk;
    const lines = buffer.split("\n");
    buffer = lines.pop();
    for (const line of lines) {
      if (line.startsWith("OK")) started();
      if (line.includes(END_MARK)) ended();
      const match = /^\d+\.\d+ \[\d+ ([^\]]+)\] "([^"]+)"/.exec(line);
      if (match === null || line.includes(END_MARK)) continue;
      if (match[1] === "lua") insideScripts++;
      else {
        const name = match[2].toLowerCase();
        sent[name] = (sent[name] ?? 0) + 1;
      }
    }
  });
  const exited = once(child, "exit");
  await firstLine;
  return {
    async stop() {
      // MONITOR streams behind the commands: everything before the mark is in once the mark is.
      execFileSync("redis-cli", ["-h", "127.0.0.1", "-p", String(redisPort), "ECHO", END_MARK], {
        stdio: "ignore",
      });
      await lastLine;
      child.kill("SIGTERM");
      await exited;
      return { sent, insideScripts };
    },
  };
}
