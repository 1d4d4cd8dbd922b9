// Starts a real `skillbox dev` (the built CLI, as users run it) in a folder, for the scripts and
// benches that need a Studio to look at. The caller stops it by the handle this returns.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The repository's `skillbox` command (needs `pnpm build`). */
export const SKILLBOX_BIN = fileURLToPath(new URL("../../cli/bin/skillbox.mjs", import.meta.url));

const LISTENING = /listening\s+(http:\/\/[^\s]+) \(MCP at /;

/**
 * Runs `skillbox dev --port 0` in `directory` (its `plugins/`), with the database `database`,
 * and resolves once it listens: `{ url, output(), stop() }`. `stop()` sends SIGTERM to this
 * child, by its handle, and resolves once it exited.
 *
 * @param {{ directory: string, database: string, env?: Record<string, string>, timeoutMs?: number }} options
 */
export async function startSkillboxDev(options) {
  if (!existsSync(fileURLToPath(new URL("../../cli/dist/main.js", import.meta.url)))) {
    throw new Error("packages/cli/dist is missing: run `pnpm build` first");
  }
  const environment = { ...process.env, NO_COLOR: "1", SKILLBOX_DB: options.database, ...options.env };
  // A developer's shell must not point this server at its own keys, port or collector.
  for (const name of ["SKILLBOX_API_KEYS", "SKILLBOX_PORT", "SKILLBOX_HOST", "SKILLBOX_LOG_LEVEL"]) {
    if (options.env?.[name] === undefined) delete environment[name];
  }
  for (const name of Object.keys(environment)) if (name.startsWith("OTEL_")) delete environment[name];
  const child = spawn(process.execPath, [SKILLBOX_BIN, "dev", "--port", "0"], {
    cwd: options.directory,
    env: environment,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk.toString();
  });
  child.stderr.on("data", (chunk) => {
    output += chunk.toString();
  });
  const exited = new Promise((resolve) => child.once("close", resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`skillbox dev did not listen within ${options.timeoutMs ?? 30_000} ms:\n${output}`),
          ),
        options.timeoutMs ?? 30_000,
      );
      const check = () => {
        const match = LISTENING.exec(output);
        if (match === null) return;
        clearTimeout(timer);
        child.stdout.off("data", check);
        resolve(match[1]);
      };
      child.stdout.on("data", check);
      child.once("close", () => {
        clearTimeout(timer);
        reject(new Error(`skillbox dev exited before listening:\n${output}`));
      });
      check();
    });
    return { url, output: () => output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
