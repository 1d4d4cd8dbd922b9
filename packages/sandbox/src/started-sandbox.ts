import { SkillboxError } from "@skillbox/core";
import { execa, type Options, type ResultPromise } from "execa";
import { OutputCapture } from "./output-capture.js";
import type { SandboxProvider, SandboxResult, SandboxSpec } from "./sandbox-types.js";

const SIGKILL_EXIT_CODE = 137;
const SPAWN_OPTIONS = {
  extendEnv: false,
  stdin: "pipe",
  stdout: "pipe",
  stderr: "pipe",
  buffer: false,
  reject: false,
  windowsHide: true,
} as const satisfies Options;

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
  private readonly subprocess: ResultPromise<typeof SPAWN_OPTIONS>;
  private readonly stdout: OutputCapture;
  private readonly stderr: OutputCapture;
  private readonly stdoutListeners: Array<(chunk: Buffer) => void> = [];
  private killRequested: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sentAt: number | undefined;
  private exited = false;

  constructor(
    private readonly provider: SandboxProvider,
    private readonly spec: SandboxSpec,
    private readonly signal?: AbortSignal,
  ) {
    this.id = spec.id;
    this.stdout = new OutputCapture(spec.config.maxOutputBytes);
    this.stderr = new OutputCapture(spec.config.maxOutputBytes);
    const plan = provider.plan(spec);
    this.subprocess = execa(plan.file, plan.args, { ...SPAWN_OPTIONS, env: plan.env });
    // The sandbox may exit or close stdin before reading it; that is its business, not an error here.
    this.subprocess.stdin.on("error", () => {});
    this.subprocess.stdout.on("data", (chunk: Buffer) => {
      this.stdout.append(chunk);
      for (const listener of this.stdoutListeners) listener(chunk);
    });
    this.subprocess.stderr.on("data", (chunk: Buffer) => this.stderr.append(chunk));
    this.result = this.settle();
  }

  /** Whether the process is still running. */
  get running(): boolean {
    return !this.exited;
  }

  /** Calls `listener` with every stdout chunk as it arrives (before the process ends). */
  onStdout(listener: (chunk: Buffer) => void): void {
    this.stdoutListeners.push(listener);
  }

  /** Writes the job to stdin, closes it and starts the time limit. */
  send(stdin?: string | Uint8Array): void {
    if (this.sentAt !== undefined) throw new Error(`sandbox ${this.id} already took its job`);
    this.sentAt = performance.now();
    const { timeout } = this.spec.config;
    const { signal } = this;
    if (timeout > 0) this.timer = setTimeout(() => void this.kill(), timeout);
    if (signal !== undefined) {
      if (signal.aborted) void this.kill();
      else signal.addEventListener("abort", () => void this.kill(), { once: true });
    }
    this.subprocess.stdin.end(stdin ?? "");
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
    if (this.provider.remove !== undefined) {
      await this.provider.remove(this.id);
      const exited = await Promise.race([
        this.subprocess.then(() => true),
        new Promise<false>((resolve) => setTimeout(resolve, CLIENT_EXIT_GRACE_MS, false).unref()),
      ]);
      if (!exited) this.subprocess.kill("SIGKILL");
    } else {
      this.subprocess.kill("SIGKILL");
    }
  }

  private async settle(): Promise<SandboxResult> {
    const outcome = await this.subprocess;
    this.exited = true;
    clearTimeout(this.timer);
    if (outcome.exitCode === undefined && outcome.signal === undefined) {
      throw new SkillboxError(
        "SANDBOX_UNAVAILABLE",
        `the ${this.provider.name} sandbox provider could not start (${outcome.shortMessage}); install it, ` +
          "or choose another with SKILLBOX_SANDBOX_RUNTIME",
        { cause: outcome.cause },
      );
    }
    const killed = this.killRequested !== undefined;
    if (killed) {
      await this.killRequested;
      // The client may have been killed while the engine was still creating the container.
      await this.provider.remove?.(this.id);
    }
    const exitCode = outcome.exitCode ?? (outcome.signal === undefined ? 1 : SIGKILL_EXIT_CODE);
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
