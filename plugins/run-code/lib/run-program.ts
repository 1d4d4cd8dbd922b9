import { type ChildProcess, spawn } from "node:child_process";
import { SkillboxError } from "@skillbox/core";
import { CappedOutput } from "./capped-output.ts";
import type { RunCodeOutput } from "./run-code-schemas.ts";

/** One program to run to its end. */
export interface ProgramOptions {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  stdin: string;
  timeoutMs: number;
  maxOutputBytes: number;
  /** Aborted when the execution is cancelled or timed out: the program is killed. */
  signal: AbortSignal;
}

/** How long output may still arrive after the program exited (from what it left running). */
const PIPE_RELEASE_DELAY_MS = 500;

/**
 * Kills the program and everything it started: it leads a process group of its own, so
 * children it left behind go too (and stop holding its pipes open).
 */
function killProgram(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // The group is already gone.
  }
}

/**
 * Runs one program with its stdin, a timeout and capped output, and reports how it ended. A
 * non-zero exit or a signal is a result, not an error; only a program that cannot be started
 * throws (`SANDBOX_FAILED`).
 */
export async function runProgram(options: ProgramOptions): Promise<RunCodeOutput> {
  const started = performance.now();
  const stdout = new CappedOutput(options.maxOutputBytes);
  const stderr = new CappedOutput(options.maxOutputBytes);
  const child = spawn(options.file, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
  // A program that exits without reading its stdin closes the pipe under the write (EPIPE).
  child.stdin.on("error", () => {});
  child.stdin.end(options.stdin);

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killProgram(child);
  }, options.timeoutMs);
  const onAbort = () => killProgram(child);
  options.signal.addEventListener("abort", onAbort, { once: true });
  // Background processes the program left behind would keep its pipes open past its end: its
  // group is killed, and pipes held by a process that left the group are let go a moment later.
  let release: NodeJS.Timeout | undefined;
  child.once("exit", () => {
    // It ended in time, even if its output is still draining.
    clearTimeout(timer);
    killProgram(child);
    release = setTimeout(() => {
      child.stdout.destroy();
      child.stderr.destroy();
    }, PIPE_RELEASE_DELAY_MS);
  });
  try {
    const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>(
      (resolve, reject) => {
        child.once("error", reject);
        child.once("close", (code, signalName) => resolve([code, signalName]));
      },
    );
    options.signal.throwIfAborted();
    return {
      stdout: stdout.text(),
      stderr: stderr.text(),
      exitCode,
      signal,
      timedOut,
      truncated: stdout.truncated || stderr.truncated,
      durationMs: Math.round(performance.now() - started),
    };
  } catch (error) {
    if (options.signal.aborted) throw error;
    throw new SkillboxError(
      "SANDBOX_FAILED",
      `run-code could not start ${options.file} in the sandbox: ${(error as Error).message}`,
      { cause: error, retryable: false },
    );
  } finally {
    clearTimeout(timer);
    clearTimeout(release);
    options.signal.removeEventListener("abort", onAbort);
  }
}
