import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createTemporaryTree, type TemporaryTree } from "./temporary-tree.js";

/** The built command, as users run it. */
export const SKILLBOX_BIN = fileURLToPath(new URL("../../packages/cli/bin/skillbox.mjs", import.meta.url));
const BUILT_MAIN = fileURLToPath(new URL("../../packages/cli/dist/main.js", import.meta.url));

/** What a finished `skillbox` process left behind. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Options of a `skillbox` invocation. */
export interface CliRunOptions {
  /** Written to stdin, which is then closed; without it stdin is /dev/null (unless `openStdin`). */
  stdin?: string;
  /** Keep stdin as an open pipe (`child.stdin`) for the test to write to and end. */
  openStdin?: boolean;
  /** Added to (or, when undefined, removed from) the environment. */
  env?: Record<string, string | undefined>;
}

/** A `skillbox` process that keeps running (dev, serve, mcp). */
export interface RunningCli {
  child: ChildProcess;
  /** Everything written to stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout (waiting for it), or rejects on exit or timeout. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves once the process exited by itself. */
  finished(): Promise<CliResult>;
  /** Sends `signal` and resolves once the process exited. */
  stop(signal?: NodeJS.Signals): Promise<CliResult>;
}

/** A temp project: a folder with `plugins/`, a database file and `@skillbox/core` installed. */
export interface CliProject {
  tree: TemporaryTree;
  databasePath: string;
  /** Runs `skillbox <args>` in the project and resolves once it exited. */
  run(args: string[], options?: CliRunOptions): Promise<CliResult>;
  /** Starts `skillbox <args>` in the project without waiting for it. */
  start(args: string[], options?: CliRunOptions): RunningCli;
  /** Kills every process still running and deletes the project. */
  cleanup(): Promise<void>;
}

/** Environment variables a developer's shell might set that would change what the tests see. */
const CLEARED_VARIABLES = [
  "SKILLBOX_DB",
  "SKILLBOX_PORT",
  "SKILLBOX_HOST",
  "SKILLBOX_API_KEYS",
  "SKILLBOX_LOG_LEVEL",
  "SKILLBOX_MAX_ATTEMPT_TIMEOUT_MS",
  "SKILLBOX_SHUTDOWN_GRACE_MS",
  "SKILLBOX_MCP_MAX_SESSIONS_PER_OWNER",
  "SKILLBOX_MCP_MAX_SESSIONS",
  "SKILLBOX_MCP_SESSION_IDLE_TIMEOUT_MS",
  "SKILLBOX_A2A_MAX_TASKS",
  "SKILLBOX_A2A_MAX_TASK_BYTES",
  "SKILLBOX_A2A_MAX_BYTES_PER_TASK",
  "FORCE_COLOR",
];

function environment(databasePath: string, extra: CliRunOptions["env"] = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", SKILLBOX_DB: databasePath };
  for (const name of CLEARED_VARIABLES) if (name !== "SKILLBOX_DB") delete env[name];
  // A developer's shell may export to a collector: the CLI under test starts no SDK unless asked.
  for (const name of Object.keys(env)) if (name.startsWith("OTEL_")) delete env[name];
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Resolves once the process exited and its output streams are drained (`close`, not `exit`). */
function closed(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once("close", (code, signal) => resolve({ code, signal })));
}

/** Creates a temp project; the caller must `cleanup()` it (afterEach). */
export function createCliProject(): CliProject {
  if (!existsSync(BUILT_MAIN)) throw new Error("packages/cli/dist is missing: run `pnpm build` first");
  const tree = createTemporaryTree("skillbox-cli-");
  tree.mkdir("plugins");
  // Scaffolded handlers import it, as they would in a user's project.
  tree.linkPackages("@skillbox/core");
  const databasePath = tree.path(".data", "skillbox.db");
  const children = new Set<ChildProcess>();

  const start = (args: string[], options: CliRunOptions = {}): RunningCli => {
    const child = spawn(process.execPath, [SKILLBOX_BIN, ...args], {
      cwd: tree.root,
      env: environment(databasePath, options.env),
      stdio: [options.stdin === undefined && options.openStdin !== true ? "ignore" : "pipe", "pipe", "pipe"],
    });
    children.add(child);
    child.once("close", () => children.delete(child));
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    if (options.stdin !== undefined) child.stdin?.end(options.stdin);
    const done = closed(child);
    const result = async (): Promise<CliResult> => ({ ...(await done), stdout, stderr });
    return {
      child,
      stdout: () => stdout,
      stderr: () => stderr,
      waitForOutput(pattern, timeoutMs = 20_000) {
        return new Promise((resolve, reject) => {
          const check = () => {
            const match = pattern.exec(stdout);
            if (match === null) return false;
            finish();
            resolve(match);
            return true;
          };
          const onExit = () => {
            if (check()) return;
            finish();
            reject(
              new Error(`skillbox exited before printing ${pattern}\nstdout:\n${stdout}\nstderr:\n${stderr}`),
            );
          };
          const timer = setTimeout(() => {
            finish();
            reject(new Error(`no ${pattern} within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
          }, timeoutMs);
          const finish = () => {
            clearTimeout(timer);
            child.stdout?.off("data", check);
            child.off("exit", onExit);
          };
          if (check()) return;
          child.stdout?.on("data", check);
          child.once("exit", onExit);
        });
      },
      finished: result,
      async stop(signal = "SIGTERM") {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        return result();
      },
    };
  };

  return {
    tree,
    databasePath,
    start,
    async run(args, options) {
      return start(args, options).finished();
    },
    async cleanup() {
      const running = [...children];
      for (const child of running) child.kill("SIGKILL");
      await Promise.all(running.map(closed));
      tree.cleanup();
    },
  };
}

/** The module hook {@link runRecordingImports} registers: it appends each resolved URL to a file. */
const RECORD_HOOKS = [
  'import { appendFileSync } from "node:fs";',
  "let file;",
  "export function initialize(data) { file = data.file; }",
  "export async function resolve(specifier, context, next) {",
  "  const result = await next(specifier, context);",
  '  appendFileSync(file, result.url + "\\n");',
  "  return result;",
  "}",
  "",
].join("\n");

/** What {@link runRecordingImports} saw. */
export interface RecordedRun {
  result: CliResult;
  /** The URL of every module the process resolved, in order (repeats included). */
  imports: string[];
}

/**
 * Runs `skillbox <args>` in `project` with a module hook (`--import`) that notes every module the
 * process resolves: how a test shows which packages a command loads, and which it never does.
 */
export async function runRecordingImports(
  project: CliProject,
  args: string[],
  env: CliRunOptions["env"] = {},
): Promise<RecordedRun> {
  const record = project.tree.path("imports.txt");
  project.tree.write("record-hooks.mjs", RECORD_HOOKS);
  project.tree.write(
    "record-imports.mjs",
    [
      'import { register } from "node:module";',
      `register("./record-hooks.mjs", import.meta.url, { data: { file: ${JSON.stringify(record)} } });`,
      "",
    ].join("\n"),
  );
  project.tree.write("imports.txt", "");
  const result = await project.run(args, {
    env: { ...env, NODE_OPTIONS: `--import ${project.tree.path("record-imports.mjs")}` },
  });
  return { result, imports: readFileSync(record, "utf8").split("\n").filter(Boolean) };
}
