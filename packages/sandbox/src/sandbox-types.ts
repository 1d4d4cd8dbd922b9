/** The sandbox providers Skillbox knows. */
export type SandboxProviderName = "podman" | "docker" | "bwrap" | "apple-container" | "wslc" | "orbstack";

/** A host folder made visible inside the sandbox. */
export interface SandboxMount {
  /** Absolute path on the host. */
  source: string;
  /** Absolute path inside the sandbox. */
  target: string;
  /** Mounted read-only unless `false`. */
  readOnly?: boolean;
}

/**
 * Limits and settings of one sandbox run. Every field is optional; the defaults are the
 * hardened ones (no network, read-only root, non-root user, 128 pids, 30 s).
 */
export interface SandboxConfig {
  /** CPU share, in cores (0.5 = half a core). Default: no limit. */
  cpus?: number;
  /** Memory limit in MiB; swap is limited to the same amount (no swap). Default: no limit. */
  memoryMb?: number;
  /** Most processes/threads at once. Default 128. */
  pidsLimit?: number;
  /** Wall-clock limit in ms, after which the sandbox is killed (`killed: true`). 0 disables it. Default 30000. */
  timeout?: number;
  /** Allow network access. Default `false`: only a private loopback. */
  network?: boolean;
  /** Read-only root file system. Default `true`. */
  readOnly?: boolean;
  /** The writable tmpfs working directory. Default `/workspace` (`/tmp/workspace` under bwrap). */
  workDir?: string;
  /** Size of the tmpfs work dir and of `/tmp`, in MiB. Default 64. */
  tmpfsSizeMb?: number;
  /** `uid[:gid]` inside the sandbox. Default `65534:65534` (nobody). */
  user?: string;
  /** Sent to the process's standard input, which is then closed. Default: empty. */
  stdin?: string | Uint8Array;
  /** Most bytes kept of stdout and of stderr each; the rest is drained and dropped. Default 1 MiB. */
  maxOutputBytes?: number;
  /** Host folders to mount. */
  mounts?: SandboxMount[];
  /** Names of host environment variables to pass through (the host's environment is never passed otherwise). */
  inheritEnv?: string[];
  /** Aborting kills the sandbox (`killed: true`). */
  signal?: AbortSignal;
}

/** What `run()` returns. `duration` is in ms, as in the reference. */
export interface SandboxResult {
  id: string;
  provider: SandboxProviderName;
  /** The process's exit code; 137 after SIGKILL (a kill or the OOM killer). */
  exitCode: number;
  stdout: string;
  stderr: string;
  duration: number;
  /** The runner killed the sandbox (timeout, abort, `kill()`, shutdown). */
  killed: boolean;
  /** The kernel's OOM killer ended the process (memory limit reached). */
  oomKilled: boolean;
  /** stdout or stderr exceeded `maxOutputBytes` and was cut. */
  truncated: boolean;
}

/** A {@link SandboxConfig} with every default filled in. */
export interface ResolvedSandboxConfig
  extends Required<Omit<SandboxConfig, "cpus" | "memoryMb" | "stdin" | "signal" | "workDir">> {
  cpus: number | undefined;
  memoryMb: number | undefined;
  /** `undefined` until the provider picks its default. */
  workDir: string | undefined;
}

/** Everything a provider needs to start one sandbox. */
export interface SandboxSpec {
  /** Unique id; container providers use it as the container name. */
  id: string;
  image: string;
  command: string[];
  env: Record<string, string>;
  config: ResolvedSandboxConfig;
}

/** A process to spawn on the host. */
export interface SpawnPlan {
  file: string;
  args: string[];
  /** The spawned process's complete environment (the host's is not inherited). */
  env: Record<string, string>;
  /** Written to the process's file descriptor 3, then closed (bwrap reads the sandbox's environment there). */
  descriptor3?: string;
}

/**
 * One way of running sandboxes (a container engine's CLI, bubblewrap, …). Providers only
 * translate a {@link SandboxSpec} into a command line and know how to remove what they
 * started; the runner owns processes, output capture, time limits and bookkeeping.
 */
export interface SandboxProvider {
  readonly name: SandboxProviderName;
  /** `false` when the provider runs on the host's own root (bwrap) and ignores the image. */
  readonly usesImages: boolean;
  /** Whether the provider can run sandboxes here (tool installed, engine reachable). */
  isAvailable(): Promise<boolean>;
  /**
   * The engine's version (`4.3.1`), asked of its CLI; undefined when it cannot tell. Spawns a
   * process: callers ask once and keep the answer (the container runtime does).
   */
  engineVersion?(): Promise<string | undefined>;
  /** The command that starts the sandbox in the foreground with stdin/stdout/stderr attached. */
  plan(spec: SandboxSpec): SpawnPlan;
  /** Called before spawning (bwrap creates its cgroup here). */
  prepare?(spec: SandboxSpec): Promise<void>;
  /** Called after the process ended; reports what the provider learned (bwrap reads its cgroup's OOM count). */
  finish?(spec: SandboxSpec, exitCode: number): Promise<{ oomKilled?: boolean }>;
  /** Stops and removes a sandbox it started; a no-op when it is already gone. */
  remove?(id: string): Promise<void>;
  /** Synchronous variant of `remove` for process shutdown, where nothing asynchronous may run. */
  removeSync?(ids: string[]): void;
  /**
   * Removes the sandboxes (and their leftovers) of owners that are certainly dead — a host
   * killed with SIGKILL — and never those of a live process; resolves with their ids.
   */
  removeOrphans?(): Promise<string[]>;
}
