import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import type { SandboxProvider, SandboxProviderName, SandboxSpec, SpawnPlan } from "../sandbox-types.js";

/** Options of {@link createContainerCliProvider}. */
export interface ContainerCliProviderOptions {
  name: SandboxProviderName;
  /** The CLI to run (`podman`, `docker`, `wslc`). */
  binary: string;
  /** Flags before the subcommand, such as `--context orbstack`. */
  globalArgs?: string[];
  /** Extra flags for `run`, placed before the image (for example `--runtime runc`). */
  runArgs?: string[];
  /** Extra environment of the CLI itself (for example `DOCKER_HOST`). */
  clientEnv?: Record<string, string>;
  /** Arguments of a command that succeeds only when the engine can run containers. */
  probeArgs?: string[];
  /** The subcommand that kills and removes a container at once (default `rm --force`). */
  removeArgs?: string[];
}

/** Variables the CLI needs from the host to find its engine; nothing else of the host reaches it. */
const CLIENT_VARIABLE = /^(PATH|HOME|TMPDIR|USER|LANG|(XDG|DOCKER|CONTAINER|CONTAINERS|PODMAN)_.*)$/;

function environmentFilePath(id: string): string {
  return join(tmpdir(), `${id}.env`);
}

/** The label every Skillbox sandbox carries, so leftovers can be found with `ps --filter label=…`. */
export const SANDBOX_LABEL = "io.skillbox.sandbox";

/** Docker-compatible `run` flags for a spec: the hardened defaults plus the configured limits. */
export function dockerCompatibleRunArgs(spec: SandboxSpec, workDir: string): string[] {
  const { config } = spec;
  const args = ["run", "--rm", "-i", "--name", spec.id, "--label", `${SANDBOX_LABEL}=${process.pid}`];
  // Images are built or pulled beforehand: a run never reaches out to a registry, whose delay
  // would count against the sandbox's time limit.
  args.push("--pull", "never");
  args.push("--log-driver", "none"); // output is streamed to the runner; nothing is written to disk
  args.push("--cap-drop", "all", "--security-opt", "no-new-privileges");
  if (!config.network) args.push("--network", "none");
  if (config.readOnly) args.push("--read-only");
  args.push("--pids-limit", String(config.pidsLimit));
  if (config.memoryMb !== undefined) {
    args.push("--memory", `${config.memoryMb}m`, "--memory-swap", `${config.memoryMb}m`);
  }
  if (config.cpus !== undefined) args.push("--cpus", String(config.cpus));
  args.push("--user", config.user);
  const tmpfsOptions = `rw,size=${config.tmpfsSizeMb}m,mode=1777`;
  args.push("--tmpfs", `/tmp:${tmpfsOptions}`);
  if (workDir !== "/tmp") args.push("--tmpfs", `${workDir}:${tmpfsOptions}`);
  args.push("--workdir", workDir);
  for (const mount of config.mounts) {
    const readOnly = mount.readOnly === false ? "" : ",readonly";
    args.push("--mount", `type=bind,source=${mount.source},target=${mount.target}${readOnly}`);
  }
  return args;
}

/**
 * The sandbox's variables, written to a private (0600) `--env-file` that is deleted when the
 * sandbox ends: values never show in `ps` and never become the CLI's own environment (an
 * `LD_PRELOAD` meant for the sandbox must not load into podman). A value with a line break,
 * which env files cannot hold, is passed by name through the CLI's environment instead.
 */
export function containerEnvironment(
  spec: SandboxSpec,
  clientEnv: Record<string, string>,
): { args: string[]; env: Record<string, string> } {
  const variables: Record<string, string> = {};
  for (const name of spec.config.inheritEnv) {
    const value = process.env[name];
    if (value !== undefined) variables[name] = value;
  }
  Object.assign(variables, spec.env);
  const env = { ...clientEnv };
  const args: string[] = [];
  const lines: string[] = [];
  for (const [name, value] of Object.entries(variables)) {
    if (/[\r\n]/.test(value)) {
      env[name] = value;
      args.push("--env", name);
    } else {
      lines.push(`${name}=${value}`);
    }
  }
  if (lines.length > 0) {
    const path = environmentFilePath(spec.id);
    // `wx`: never write through a file (or a planted symlink) that is already there.
    writeFileSync(path, `${lines.join("\n")}\n`, { mode: 0o600, flag: "wx" });
    args.push("--env-file", path);
  }
  return { args, env };
}

/** Deletes the env file of a sandbox that ended. */
export function removeEnvironmentFile(id: string): void {
  rmSync(environmentFilePath(id), { force: true });
}

function hostEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    // Only what the CLI needs to find its engine; the rest of the host's environment stays out.
    if (value !== undefined && CLIENT_VARIABLE.test(name)) env[name] = value;
  }
  return env;
}

/**
 * A provider for a Docker-compatible container CLI (podman, docker, OrbStack's docker, wslc):
 * `run --rm -i` in the foreground, hardened by default, removed with `rm -f`.
 */
export function createContainerCliProvider(options: ContainerCliProviderOptions): SandboxProvider {
  const globalArgs = options.globalArgs ?? [];
  const removeArgs = options.removeArgs ?? ["rm", "--force"];
  const clientEnv = () => ({ ...hostEnvironment(), ...options.clientEnv });
  return {
    name: options.name,
    usesImages: true,
    async isAvailable() {
      const probe = options.probeArgs ?? ["version", "--format", "{{.Server.Version}}"];
      const result = await execa(options.binary, [...globalArgs, ...probe], {
        env: clientEnv(),
        extendEnv: false,
        reject: false,
        timeout: 10_000,
      });
      return result.exitCode === 0;
    },
    plan(spec: SandboxSpec): SpawnPlan {
      const workDir = spec.config.workDir ?? "/workspace";
      const environment = containerEnvironment(spec, clientEnv());
      const args = [
        ...globalArgs,
        ...dockerCompatibleRunArgs(spec, workDir),
        ...environment.args,
        ...(options.runArgs ?? []),
        spec.image,
        ...spec.command,
      ];
      return { file: options.binary, args, env: environment.env };
    },
    async finish(spec: SandboxSpec) {
      removeEnvironmentFile(spec.id);
      return {};
    },
    async remove(id: string) {
      await execa(options.binary, [...globalArgs, ...removeArgs, id], {
        env: clientEnv(),
        extendEnv: false,
        reject: false,
        timeout: 30_000,
      });
    },
    removeSync(ids: string[]) {
      if (ids.length === 0) return;
      spawnSync(options.binary, [...globalArgs, ...removeArgs, ...ids], {
        env: clientEnv(),
        stdio: "ignore",
        timeout: 30_000,
      });
    },
  };
}
