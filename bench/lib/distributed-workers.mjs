// `skillbox worker` processes for the distributed benchmark, started as users start them (the
// built bin, --db/--queue/--concurrency and a skills folder) and stopped by their own handle.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

const SKILLBOX_BIN = fileURLToPath(new URL("../../packages/cli/bin/skillbox.mjs", import.meta.url));
const READY = /worker (\S+) ready/;
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;
/** Output kept for an error message: the worker logs a line per execution, which is not kept. */
const KEPT_OUTPUT = 8_000;

/** The environment of a worker: the bench's, without the SKILLBOX_ and OTEL_ settings of a developer's shell. */
function workerEnvironment() {
  const env = { ...process.env, NO_COLOR: "1" };
  for (const name of Object.keys(env)) {
    if (name.startsWith("SKILLBOX_") || name.startsWith("OTEL_")) delete env[name];
  }
  return env;
}

/**
 * Starts `skillbox worker --db <database> --queue <queue> --concurrency <concurrency> <skillsFolder>`
 * in `cwd` and resolves once it printed `worker <id> ready`, with its id and `stop()` (SIGTERM: it
 * stops taking jobs and exits; SIGKILL if it has not within 15 s).
 */
export async function startSkillboxWorker({ database, queue, concurrency, skillsFolder, cwd }) {
  const child = spawn(
    process.execPath,
    [
      SKILLBOX_BIN,
      "worker",
      "--db",
      database,
      "--queue",
      queue,
      "--concurrency",
      String(concurrency),
      skillsFolder,
    ],
    { cwd, env: workerEnvironment(), stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-KEPT_OUTPUT);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exited = once(child, "exit");
  const workerId = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => fail(`no "worker … ready" line within ${READY_TIMEOUT_MS} ms`),
      READY_TIMEOUT_MS,
    );
    const check = () => {
      const match = READY.exec(output);
      if (match === null) return;
      finish();
      resolve(match[1]);
    };
    const onExit = (code, signal) => fail(`skillbox worker exited (${signal ?? code}) before it was ready`);
    const finish = () => {
      clearTimeout(timer);
      child.stdout.off("data", check);
      child.off("exit", onExit);
    };
    const fail = (message) => {
      finish();
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      reject(new Error(`${message}:\n${output}`));
    };
    child.stdout.on("data", check);
    child.once("exit", onExit);
  });
  return {
    workerId,
    pid: child.pid,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
