import { type ChildProcess, spawn } from "node:child_process";
import { constants } from "node:os";
import { StringDecoder } from "node:string_decoder";
import { SkillboxError } from "@skillbox/core";
import { ControlLineFilter } from "./control-lines.js";
import { OutputCapture } from "./output-capture.js";
import type { SandboxProvider, SandboxResult, SandboxSpec } from "./sandbox-types.js";

const SIGKILL_EXIT_CODE = 137;

/** Pause between removal attempts while an engine is still creating a killed container. */
const REMOVE_RETRY_MS = 200;
/** How long a killed engine client may take to exit before it is killed too. */
const CLIENT_EXIT_GRACE_MS = 5_000;

/**
 * One sandbox process, started with its standard input held open. `send()` delivers the job
 * (the bytes for stdin) and starts the time limit; `result` settles when the process ended
 * and, after a kill, the provider has removed what was left. Warm pools start these ahead
 * of time; `SandboxRunner.run()` starts one and sends at once.
 */
export class StartedSandbox {
  readonly id: string;
  readonly result: Promise<SandboxResult>;
  /**
   * Spawned with node's own `spawn` rather than execa: a sandbox needs none of execa's extras,
   * and its per-spawn cost (about 3 ms here) is a tenth of bwrap's whole overhead budget.
   */
  private readonly subprocess: ChildProcess;
  /** Settles when the process exited and its output streams closed. */
  private readonly ended: Promise<{ exitCode: number | null; signal: NodeJS.Signals | null; error?: Error }>;
  private readonly stdout: OutputCapture;
  private readonly stderr: OutputCapture;
  /** Takes the control lines out of stderr (`control-lines.ts`); the rest goes to `stderr`. */
  private readonly stderrFilter: ControlLineFilter;
  private stderrEnded = false;
  private readonly controlWaiters: Array<{ count: number; resolve: () => void }> = [];
  /**
   * Hears each control line the sandbox prints on stderr (`\u001eskillbox:<kind> <payload>`) as it
   * comes; lines before one is set are dropped. Control lines never reach `result.stderr`.
   */
  onControlLine: ((kind: string, payload: string) => void) | undefined;
  /** Complete stdout lines not yet read, and the readers waiting for one. */
  private readonly lines: string[] = [];
  private partialLine = "";
  /** Keeps a character whose bytes arrive in two chunks whole. */
  private readonly stdoutDecoder = new StringDecoder("utf8");
  private queuedLineBytes = 0;
  /** Lines are split only once someone reads them; `run()` never does. */
  private linesWanted = false;
  private readonly lineWaiters: Array<(line: string | undefined) => void> = [];
  private killRequested: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sentAt: number | undefined;
  private exited = false;

  constructor(
    private readonly provider: SandboxProvider,
    private readonly spec: SandboxSpec,
  ) {
    this.id = spec.id;
    this.stdout = new OutputCapture(spec.config.maxOutputBytes);
    this.stderr = new OutputCapture(spec.config.maxOutputBytes);
    const plan = provider.plan(spec);
    this.subprocess = spawn(plan.file, plan.args, {
      env: plan.env,
      stdio: plan.descriptor3 === undefined ? ["pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe", "pipe"],
      windowsHide: true,
    });
    this.ended = new Promise((resolve) => {
      this.subprocess.once("error", (error) => resolve({ exitCode: null, signal: null, error }));
      this.subprocess.once("close", (exitCode, signal) => resolve({ exitCode, signal }));
    });
    // The sandbox may exit before reading stdin or descriptor 3 (a kill, a crash): its end of the
    // pipe then resets ours (EPIPE, ECONNRESET). That is its business, not an error of the host,
    // and an unhandled stream error would crash the host.
    const ignore = () => {};
    for (const stream of this.subprocess.stdio) stream?.on("error", ignore);
    const descriptor3 = this.subprocess.stdio[3] as NodeJS.WritableStream | null | undefined;
    if (plan.descriptor3 !== undefined) descriptor3?.end(plan.descriptor3);
    this.subprocess.stdout?.on("data", (chunk: Buffer) => {
      this.stdout.append(chunk);
      this.splitLines(chunk);
    });
    this.stderrFilter = new ControlLineFilter(
      (chunk) => this.stderr.append(chunk),
      (kind, payload) => this.controlLine(kind, payload),
    );
    this.subprocess.stderr?.on("data", (chunk: Buffer) => this.stderrFilter.write(chunk));
    this.subprocess.stderr?.once("end", () => this.endStderr());
    this.result = this.settle();
  }

  /**
   * Resolves once `count` control lines were seen on stderr, or stderr ended first: a result on
   * stdout may overtake the control lines printed before it, which travel on another pipe.
   */
  untilControlLines(count: number): Promise<void> {
    if (this.stderrFilter.count >= count || this.stderrEnded) return Promise.resolve();
    return new Promise((resolve) => this.controlWaiters.push({ count, resolve }));
  }

  private controlLine(kind: string, payload: string): void {
    try {
      this.onControlLine?.(kind, payload);
    } catch {
      // A listener's failure is its own: the sandbox's output keeps flowing.
    }
    if (this.controlWaiters.length === 0) return;
    const count = this.stderrFilter.count;
    for (const waiter of this.controlWaiters.filter((candidate) => candidate.count <= count)) {
      this.controlWaiters.splice(this.controlWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  private endStderr(): void {
    this.stderrFilter.end();
    this.stderrEnded = true;
    for (const waiter of this.controlWaiters.splice(0)) waiter.resolve();
  }

  /** Whether the process is still running. */
  get running(): boolean {
    return !this.exited;
  }

  /**
   * The next line of stdout as soon as it arrives, without its newline; `undefined` once the
   * process has ended with no further complete line. Lets a caller act on a protocol line
   * (a readiness mark, a result) before the engine finishes tearing the sandbox down.
   */
  readLine(): Promise<string | undefined> {
    this.linesWanted = true;
    const line = this.lines.shift();
    if (line !== undefined) {
      this.queuedLineBytes -= line.length;
      return Promise.resolve(line);
    }
    if (this.exited) return Promise.resolve(undefined);
    return new Promise((resolve) => this.lineWaiters.push(resolve));
  }

  private splitLines(chunk: Buffer): void {
    // Unread lines are bounded like the capture itself: a flood costs no more than the cap.
    const limit = this.spec.config.maxOutputBytes;
    if (!this.linesWanted || this.partialLine.length + this.queuedLineBytes > limit) return;
    const parts = (this.partialLine + this.stdoutDecoder.write(chunk)).split("\n");
    this.partialLine = parts.pop() ?? "";
    for (const line of parts) {
      const waiter = this.lineWaiters.shift();
      if (waiter !== undefined) {
        waiter(line);
      } else if (this.queuedLineBytes + line.length <= limit) {
        this.lines.push(line);
        this.queuedLineBytes += line.length;
      }
    }
  }

  /** Writes the job to stdin, closes it and starts the time limit; aborting `signal` kills the sandbox. */
  send(stdin?: string | Uint8Array, signal?: AbortSignal): void {
    if (this.sentAt !== undefined) throw new Error(`sandbox ${this.id} already took its job`);
    this.sentAt = performance.now();
    const { timeout } = this.spec.config;
    if (timeout > 0) this.timer = setTimeout(() => void this.kill(), timeout);
    if (signal !== undefined) {
      if (signal.aborted) void this.kill();
      else signal.addEventListener("abort", () => void this.kill(), { once: true });
    }
    this.subprocess.stdin?.end(stdin ?? "");
  }

  /**
   * Kills the sandbox: the provider removes the container (which ends its attached client),
   * or the process is killed directly when there is no engine (bwrap).
   */
  kill(): Promise<void> {
    this.killRequested ??= this.forceStop();
    return this.killRequested;
  }

  /** Kills the local process at once, during process shutdown (the runner removes containers in one batch). */
  killForShutdown(): void {
    this.killRequested ??= Promise.resolve();
    this.subprocess.kill("SIGKILL");
  }

  private async forceStop(): Promise<void> {
    if (this.exited) return;
    if (!this.provider.usesImages) {
      // No engine: the process is the sandbox; the provider kills whatever it left (its cgroup).
      this.subprocess.kill("SIGKILL");
      await this.provider.remove?.(this.id);
      return;
    }
    // Removing the container ends its attached client. The engine may still be creating it,
    // so removal is repeated until the client is gone.
    const deadline = performance.now() + CLIENT_EXIT_GRACE_MS;
    const exited = this.ended.then(() => true);
    while (!this.exited && performance.now() < deadline) {
      await this.provider.remove?.(this.id);
      const gone = await Promise.race([
        exited,
        new Promise<false>((resolve) => setTimeout(resolve, REMOVE_RETRY_MS, false).unref()),
      ]);
      if (gone) return;
    }
    this.subprocess.kill("SIGKILL");
  }

  private async settle(): Promise<SandboxResult> {
    const outcome = await this.ended;
    this.exited = true;
    clearTimeout(this.timer);
    for (const waiter of this.lineWaiters.splice(0)) waiter(undefined);
    // The streams closed with the process ('close' follows them): nothing more comes on stderr.
    if (!this.stderrEnded) this.endStderr();
    if (outcome.error !== undefined) {
      await this.provider.finish?.(this.spec, 1).catch(() => {});
      throw new SkillboxError(
        "SANDBOX_UNAVAILABLE",
        `the ${this.provider.name} sandbox provider could not start (${outcome.error.message}); install it, ` +
          "or choose another with SKILLBOX_SANDBOX_RUNTIME",
        { cause: outcome.error },
      );
    }
    const killed = this.killRequested !== undefined;
    if (killed) {
      await this.killRequested;
      // The client may have been killed while the engine was still creating the container.
      await this.provider.remove?.(this.id);
    }
    // A process ended by a signal reports 128 + its number, as shells and engines do.
    const exitCode =
      outcome.exitCode ?? (outcome.signal === null ? 1 : 128 + (constants.signals[outcome.signal] ?? 9));
    const reported = (await this.provider.finish?.(this.spec, exitCode)) ?? {};
    return {
      id: this.id,
      provider: this.provider.name,
      exitCode,
      stdout: this.stdout.text(),
      stderr: this.stderr.text(),
      duration: Math.round(performance.now() - (this.sentAt ?? performance.now())),
      killed,
      // Engines report an OOM kill only through `inspect`, which `--rm` rules out: a SIGKILL the
      // runner did not send comes from the OOM killer (the only other sender would be root).
      oomKilled: reported.oomKilled ?? (exitCode === SIGKILL_EXIT_CODE && !killed),
      truncated: this.stdout.truncated || this.stderr.truncated,
    };
  }
}
