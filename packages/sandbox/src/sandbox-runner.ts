import { randomUUID } from "node:crypto";
import { resolveProvider } from "./resolve-provider.js";
import { resolveSandboxConfig, validateSandboxEnv } from "./resolve-sandbox-config.js";
import type { SandboxConfig, SandboxProvider, SandboxResult } from "./sandbox-types.js";
import { StartedSandbox } from "./started-sandbox.js";

/** Options of {@link SandboxRunner}. */
export interface SandboxRunnerOptions {
  /** The provider to use; default: {@link resolveProvider} on first use. */
  provider?: SandboxProvider | (() => Promise<SandboxProvider>);
  /** Kill this runner's sandboxes when the process gets SIGINT or SIGTERM, or exits. Default `true`. */
  killOnExit?: boolean;
  /**
   * Once the provider is resolved, remove in the background the sandboxes of hosts that died
   * without cleaning up (SIGKILL, a crash), as {@link SandboxRunner.removeOrphans} does. Default `true`.
   */
  removeOrphansOnStart?: boolean;
}

const SHUTDOWN_SIGNALS = ["SIGINT", "SIGTERM"] as const;

/**
 * Runs commands in sandboxes (the reference's `SandboxRunner`): one container (or bwrap
 * namespace) per run, hardened by default, with CPU, memory, pids, time and network limits,
 * and output streamed into capped buffers. Tracks what it started so it can kill one or all.
 */
export class SandboxRunner {
  private readonly running = new Map<string, StartedSandbox>();
  private providerPromise: Promise<SandboxProvider> | undefined;
  /** The resolved provider, for shutdown handlers that cannot await. */
  private provider: SandboxProvider | undefined;
  private readonly providerSource: SandboxRunnerOptions["provider"];
  private readonly killOnExit: boolean;
  private readonly removeOrphansOnStart: boolean;
  private orphanSweep: Promise<string[]> | undefined;
  private shutdownHooked = false;

  constructor(options: SandboxRunnerOptions = {}) {
    this.providerSource = options.provider;
    this.killOnExit = options.killOnExit ?? true;
    this.removeOrphansOnStart = options.removeOrphansOnStart ?? true;
  }

  /**
   * Removes the sandboxes whose owning process is dead — left by a host killed with SIGKILL or
   * crashed before its watchdog could act — and never those of a live host (each sandbox's
   * label names its owner by boot, pid namespace, pid and start time). Resolves with the ids
   * removed. The runner does this once by itself when its provider is resolved
   * (`removeOrphansOnStart`); each call sweeps anew.
   */
  removeOrphans(): Promise<string[]> {
    const sweep = this.getProvider().then((provider) => provider.removeOrphans?.() ?? []);
    this.orphanSweep ??= sweep;
    return sweep;
  }

  /**
   * The provider once {@link getProvider} has resolved it, else undefined: a synchronous look
   * that never starts the resolution (which probes engines).
   */
  get resolvedProvider(): SandboxProvider | undefined {
    return this.provider;
  }

  /** The provider this runner uses, resolved (and cached) on first call. */
  getProvider(): Promise<SandboxProvider> {
    if (this.providerPromise === undefined) {
      const source = this.providerSource;
      this.providerPromise =
        source === undefined
          ? resolveProvider()
          : typeof source === "function"
            ? source()
            : Promise.resolve(source);
      this.providerPromise.then(
        (provider) => {
          this.provider = provider;
          if (this.removeOrphansOnStart && this.orphanSweep === undefined) {
            // In the background: a sweep must not delay the first run, and its failure (an
            // engine that answers `run` but not `ps`) is no reason to fail one.
            this.orphanSweep = Promise.resolve(provider.removeOrphans?.() ?? []).catch(() => []);
          }
        },
        // A failed resolution is retried next time (an engine may have been installed since).
        () => {
          this.providerPromise = undefined;
        },
      );
    }
    return this.providerPromise;
  }

  /**
   * Runs `command` in a fresh sandbox of `image` and resolves when it ended. `env` is the
   * sandbox's whole environment (plus the image's defaults); the host's is never passed
   * unless named in `config.inheritEnv`. A non-zero exit is not an error: check `exitCode`.
   */
  async run(
    image: string,
    command: string[],
    env: Record<string, string> = {},
    config: SandboxConfig = {},
  ): Promise<SandboxResult> {
    const sandbox = await this.start(image, command, env, config);
    sandbox.send(config.stdin, config.signal);
    return sandbox.result;
  }

  /**
   * Starts a sandbox whose stdin stays open until `send()` delivers the job; the time limit
   * starts then, and `config.stdin` and `config.signal` are ignored (give them to `send()`).
   * Warm pools use this to pay the start-up cost ahead of time.
   */
  async start(
    image: string,
    command: string[],
    env: Record<string, string> = {},
    config: SandboxConfig = {},
  ): Promise<StartedSandbox> {
    const resolved = resolveSandboxConfig(config);
    const spec = {
      id: `skillbox-${randomUUID()}`,
      image,
      command,
      env: validateSandboxEnv(env),
      config: resolved,
    };
    const provider = await this.getProvider();
    await provider.prepare?.(spec);
    let sandbox: StartedSandbox;
    try {
      sandbox = new StartedSandbox(provider, spec);
    } catch (error) {
      // A spec the provider refuses to plan never ran: what `prepare` set up for it (a watchdog
      // entry, a cgroup) is released as for a sandbox that ended.
      await provider.finish?.(spec, 1).catch(() => {});
      throw error;
    }
    this.track(sandbox);
    return sandbox;
  }

  /** Kills one sandbox; resolves once it is gone. Unknown ids are ignored. */
  async kill(id: string): Promise<void> {
    const sandbox = this.running.get(id);
    if (sandbox === undefined) return;
    await sandbox.kill();
    await sandbox.result.catch(() => {});
  }

  /** Kills every running sandbox of this runner. */
  async killAll(): Promise<void> {
    await Promise.all([...this.running.keys()].map((id) => this.kill(id)));
  }

  isRunning(id: string): boolean {
    return this.running.has(id);
  }

  getRunningCount(): number {
    return this.running.size;
  }

  private track(sandbox: StartedSandbox): void {
    this.running.set(sandbox.id, sandbox);
    this.hookShutdown();
    const forget = () => {
      this.running.delete(sandbox.id);
      if (this.running.size === 0) this.unhookShutdown();
    };
    sandbox.result.then(forget, forget);
  }

  /** Kills everything synchronously: signal and exit handlers cannot wait for promises. */
  private readonly killForShutdown = () => {
    const sandboxes = [...this.running.values()];
    if (sandboxes.length === 0) return;
    for (const sandbox of sandboxes) sandbox.killForShutdown();
    this.provider?.removeSync?.(sandboxes.map((sandbox) => sandbox.id));
  };

  private readonly onSignal = (signal: NodeJS.Signals) => {
    this.killForShutdown();
    this.unhookShutdown();
    // Only re-raise when nobody else handles the signal, so apps keep their own shutdown.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };

  private hookShutdown(): void {
    if (!this.killOnExit || this.shutdownHooked) return;
    this.shutdownHooked = true;
    for (const signal of SHUTDOWN_SIGNALS) process.on(signal, this.onSignal);
    process.on("exit", this.killForShutdown);
  }

  private unhookShutdown(): void {
    if (!this.shutdownHooked) return;
    this.shutdownHooked = false;
    for (const signal of SHUTDOWN_SIGNALS) process.off(signal, this.onSignal);
    process.off("exit", this.killForShutdown);
  }
}
