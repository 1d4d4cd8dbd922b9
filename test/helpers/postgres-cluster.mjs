// Plain JavaScript (types in postgres-cluster.d.mts) so that bench/*.mjs, which Node runs without a
// TypeScript loader, starts its cluster with the same code as the tests.
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { freeLoopbackPort } from "./free-loopback-port.mjs";

const START_TIMEOUT_MS = 30_000;

/** The newest PostgreSQL installed from Debian's packages (`/usr/lib/postgresql/<major>/bin`). */
export function postgresBinaries() {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((name) => existsSync(join(root, name, "bin", "postgres")))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] === undefined ? undefined : join(root, majors[0], "bin");
}

function quote(value) {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * The server refuses to run as root: as root, every command runs as the `postgres` user the
 * Debian package creates; as anyone else, as that user.
 */
function asServerUser(command) {
  if (userInfo().uid === 0) return { file: "su", args: ["postgres", "-s", "/bin/sh", "-c", command] };
  return { file: "/bin/sh", args: ["-c", command] };
}

function serverUserIds() {
  if (userInfo().uid !== 0) return undefined;
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  return { uid, gid };
}

async function accepts(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Starts a PostgreSQL cluster of its own: `initdb` into a temporary folder, then `postgres` on a
 * free loopback port, trust authentication, fsync off (a test's data need not survive a crash).
 */
export async function startPostgresCluster() {
  const binaries = postgresBinaries();
  if (binaries === undefined) throw new Error("PostgreSQL is not installed: apt-get install -y postgresql");
  const parent = mkdtempSync(join(tmpdir(), "skillbox-pg-"));
  // Every folder above the data folder must be traversable by the server's user.
  chmodSync(parent, 0o755);
  const data = join(parent, "data");
  mkdirSync(data, { mode: 0o700 });
  const ids = serverUserIds();
  if (ids !== undefined) chownSync(data, ids.uid, ids.gid);
  const initdb = asServerUser(
    `exec ${quote(join(binaries, "initdb"))} -D ${quote(data)} -A trust -U postgres --no-sync -E UTF8 --locale=C.UTF-8`,
  );
  execFileSync(initdb.file, initdb.args, { stdio: "ignore" });
  const port = await freeLoopbackPort();
  const serve = asServerUser(
    `exec ${quote(join(binaries, "postgres"))} -D ${quote(data)} -p ${port} -k ${quote(data)} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`,
  );
  const child = spawn(serve.file, serve.args, { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout?.resume();
  child.stderr?.resume();
  const stopServer = async () => {
    const stop = asServerUser(
      `exec ${quote(join(binaries, "pg_ctl"))} -D ${quote(data)} -m immediate -w stop`,
    );
    try {
      execFileSync(stop.file, stop.args, { stdio: "ignore" });
    } catch {
      // Not running (any more): nothing to stop.
    }
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    }
    rmSync(parent, { recursive: true, force: true });
  };
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stopServer();
      throw new Error(`PostgreSQL on port ${port} did not start within ${START_TIMEOUT_MS} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const psql = join(binaries, "psql");
  // The port accepts before the server takes queries (startup packets answer "starting up").
  for (;;) {
    try {
      execFileSync(
        psql,
        ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-c", "SELECT 1"],
        {
          stdio: "ignore",
        },
      );
      break;
    } catch (error) {
      if (Date.now() > deadline) {
        await stopServer();
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const base = `postgres://postgres@127.0.0.1:${port}`;
  return {
    url: `${base}/postgres`,
    port,
    createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name))
        throw new Error(`database name ${JSON.stringify(name)}: use [a-z0-9_]`);
      execFileSync(
        psql,
        [
          "-h",
          "127.0.0.1",
          "-p",
          String(port),
          "-U",
          "postgres",
          "-d",
          "postgres",
          "-c",
          `CREATE DATABASE ${name}`,
        ],
        {
          stdio: "ignore",
        },
      );
      return `${base}/${name}`;
    },
    stop: stopServer,
  };
}
