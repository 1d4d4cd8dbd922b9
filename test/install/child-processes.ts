import { type ChildProcess, spawn } from "node:child_process";

/** What a finished process left behind. */
export interface ProcessResult {
  /** The command line, for failure messages. */
  command: string;
  /** The process id it ran as (sandboxes label their containers with their host's). */
  pid: number | undefined;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall-clock milliseconds from spawn to close (reported, never asserted on). */
  durationMs: number;
}

/** How to start a process. */
export interface ProcessOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /**
   * A safety net, not an assertion: a process still running after this long is killed and its
   * run rejects with everything it printed, so a hang fails the test instead of freezing the suite.
   */
  timeoutMs?: number;
}

/** A process that keeps running (`skillbox dev`) until the test stops it. */
export interface RunningProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout; rejects when the process exits without it. */
  waitForOutput(pattern: RegExp): Promise<RegExpMatchArray>;
  /** Resolves once the process exited by itself (or was killed by the safety net). */
  finished(): Promise<ProcessResult>;
  /** Sends `signal` (if it still runs) and resolves once the process exited and its output is drained. */
  stop(signal?: NodeJS.Signals): Promise<ProcessResult>;
}

/** Every process a test file starts, so `stopAll` in `afterAll` leaves none behind. */
export interface ProcessGroup {
  start(file: string, args: string[], options: ProcessOptions): RunningProcess;
  /** Starts a process and resolves once it exited. */
  run(file: string, args: string[], options: ProcessOptions): Promise<ProcessResult>;
  /** Kills every process of the group still running and waits for each to exit. */
  stopAll(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 120_000;

/** `result` as text for an assertion message: the command, how it ended, and what it printed. */
export function describeResult(result: ProcessResult): string {
  return [
    `$ ${result.command}`,
    `exit code ${result.code}${result.signal === null ? "" : `, signal ${result.signal}`}`,
    `stdout:\n${result.stdout}`,
    `stderr:\n${result.stderr}`,
  ].join("\n");
}

function quote(argument: string): string {
  return /^[\w@%+=:,./-]+$/.test(argument) ? argument : `'${argument.replaceAll("'", "'\\''")}'`;
}

/** Creates an empty {@link ProcessGroup}. */
export function createProcessGroup(): ProcessGroup {
  const running = new Set<RunningProcess>();

  const start = (file: string, args: string[], options: ProcessOptions): RunningProcess => {
    const command = [file, ...args].map(quote).join(" ");
    const started = performance.now();
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const closed = new Promise<ProcessResult>((resolve) => {
      const finish = (code: number | null, signal: NodeJS.Signals | null) => {
        clearTimeout(timer);
        running.delete(handle);
        resolve({
          command,
          pid: child.pid,
          code,
          signal,
          stdout,
          stderr,
          durationMs: performance.now() - started,
        });
      };
      child.once("close", finish);
      // A binary that cannot be spawned (ENOENT) emits `error` and no `close`.
      child.once("error", (error) => {
        stderr += `spawn failed: ${error.message}\n`;
        finish(null, null);
      });
    });
    const handle: RunningProcess = {
      child,
      stdout: () => stdout,
      stderr: () => stderr,
      waitForOutput(pattern) {
        return new Promise((resolve, reject) => {
          const check = () => {
            const match = pattern.exec(stdout);
            if (match === null) return;
            child.stdout?.off("data", check);
            resolve(match);
          };
          child.stdout?.on("data", check);
          check();
          void closed.then((result) => {
            child.stdout?.off("data", check);
            if (pattern.exec(stdout) === null) {
              reject(new Error(`exited before printing ${pattern}\n${describeResult(result)}`));
            }
          });
        });
      },
      finished: () => closed,
      stop(signal = "SIGTERM") {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        return closed;
      },
    };
    running.add(handle);
    return handle;
  };

  return {
    start,
    run: (file, args, options) => start(file, args, options).finished(),
    async stopAll() {
      await Promise.all([...running].map((process) => process.stop("SIGKILL")));
    },
  };
}
