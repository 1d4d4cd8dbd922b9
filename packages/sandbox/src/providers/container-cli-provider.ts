import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SkillboxError } from "@skillbox/core";
import { execa } from "execa";
import {
  currentSandboxOwner,
  formatSandboxOwner,
  isSandboxOwnerDead,
  parseSandboxOwner,
  SANDBOX_OWNER_LABEL,
} from "../sandbox-owner.js";
import type { SandboxProvider, SandboxProviderName, SandboxSpec, SpawnPlan } from "../sandbox-types.js";
import { sharedHostDeathWatchdog } from "./host-death-watchdog.js";

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
  /** Arguments of a command that prints the engine's version alone (default `version --format {{.Server.Version}}`). */
  versionArgs?: string[];
  /** The subcommand that kills and removes a container at once (default `rm --force`). */
  removeArgs?: string[];
  /**
   * How the sandbox's variables reach the CLI: `descriptor` (default) streams an env file on
   * descriptor 3 (`--env-file /dev/fd/3`), so nothing is written to disk; `file` (the default on
   * Windows) writes a private temporary file, for CLIs that cannot open `/dev/fd`.
   */
  environmentVia?: "descriptor" | "file";
}

/** Variables the CLI needs from the host to find its engine; nothing else of the host reaches it. */
const CLIENT_VARIABLE = /^(PATH|HOME|TMPDIR|USER|LANG|(XDG|DOCKER|CONTAINER|CONTAINERS|PODMAN)_.*)$/;

/**
 * Variables that change how the CLI, the dynamic loader, the Go runtime of podman and docker or
 * the `/bin/sh` wrapper behave. A multi-line value travels through the CLI's own environment
 * (env files cannot hold line breaks), so one under these names would act on the CLI itself: a
 * planted `LD_PRELOAD`, another `PATH` or `DOCKER_HOST`. Those are refused instead.
 */
const CLI_BEHAVIOUR_VARIABLE =
  /^(LD_.*|DYLD_.*|GODEBUG|GOGC|GOMAXPROCS|GOMEMLIMIT|GOTRACEBACK|(HTTP|HTTPS|FTP|ALL|NO)_PROXY|SSL_CERT_(FILE|DIR)|LC_.*|LANGUAGE|TZ|IFS|ENV|BASH_ENV|PS4|SHELLOPTS)$/i;

/**
 * Node gives a child's extra descriptors as a socket, which `open("/dev/fd/3")` refuses (ENXIO):
 * the shell copies it into a real pipe on descriptor 3 and then becomes the CLI, the job's
 * stdin restored on descriptor 0.
 */
const ENVIRONMENT_THROUGH_PIPE = 'exec 4<&0; cat <&3 3<&- 4<&- | { exec 3<&0 0<&4 4<&-; exec "$@"; }';

function environmentFilePath(id: string): string {
  return join(tmpdir(), `${id}.env`);
}

/**
 * The label every Skillbox sandbox carries (its value: the owning process's pid), so leftovers
 * can be found with `ps --filter label=…`. {@link SANDBOX_OWNER_LABEL} identifies the owner
 * fully (boot, pid namespace, pid, start time) for the start-up sweep of dead owners' sandboxes.
 */
export const SANDBOX_LABEL = "io.skillbox.sandbox";

/** The `--label` flags naming this process as the sandbox's owner. */
export function sandboxOwnerLabelArgs(): string[] {
  return [
    "--label",
    `${SANDBOX_LABEL}=${process.pid}`,
    "--label",
    `${SANDBOX_OWNER_LABEL}=${formatSandboxOwner(currentSandboxOwner())}`,
  ];
}

/** Docker-compatible `run` flags for a spec: the hardened defaults plus the configured limits. */
function dockerCompatibleRunArgs(spec: SandboxSpec, workDir: string): string[] {
  const { config } = spec;
  const args = ["run", "--rm", "-i", "--name", spec.id, ...sandboxOwnerLabelArgs()];
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
 * The sandbox's variables as an env file the CLI reads: values never show in `ps` and never
 * become the CLI's own environment (an `LD_PRELOAD` meant for the sandbox must not load into
 * podman). With `via: "descriptor"` (the default) the file is streamed on descriptor 3
 * (`--env-file /dev/fd/3`) and never touches the disk, so a host killed mid-run leaves nothing
 * behind; with `via: "file"` it is a private (0600) temporary file deleted when the sandbox
 * ends. A value with a line break, which env files cannot hold, is passed by name through the
 * CLI's environment instead, unless the CLI would act on it (`PATH`, `LD_PRELOAD`, `DOCKER_HOST`,
 * …): that is refused with `SANDBOX_CONFIG_INVALID` naming the variable.
 */
export function containerEnvironment(
  spec: SandboxSpec,
  clientEnv: Record<string, string>,
  via: "descriptor" | "file" = "descriptor",
): { args: string[]; env: Record<string, string>; descriptor3?: string } {
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
      if (CLIENT_VARIABLE.test(name) || CLI_BEHAVIOUR_VARIABLE.test(name)) {
        throw new SkillboxError(
          "SANDBOX_CONFIG_INVALID",
          `sandbox env: \`${name}\` has a line break, which an env file cannot hold, and passing it through the container CLI's own environment would change how the CLI runs; remove the line breaks (encode the value, e.g. as base64) or use another variable name`,
          { data: { variable: name } },
        );
      }
      env[name] = value;
      args.push("--env", name);
    } else {
      lines.push(`${name}=${value}`);
    }
  }
  if (lines.length === 0) return { args, env };
  const contents = `${lines.join("\n")}\n`;
  if (via === "descriptor") {
    args.push("--env-file", "/dev/fd/3");
    return { args, env, descriptor3: contents };
  }
  const path = environmentFilePath(spec.id);
  // `wx`: never write through a file (or a planted symlink) that is already there.
  writeFileSync(path, contents, { mode: 0o600, flag: "wx" });
  args.push("--env-file", path);
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
  // Windows has neither `/bin/sh` for the pipe nor `/dev/fd` for the CLI to open.
  const via = options.environmentVia ?? (process.platform === "win32" ? "file" : "descriptor");
  const removeCommand = [options.binary, ...globalArgs, ...removeArgs];
  let watchdog: ReturnType<typeof sharedHostDeathWatchdog> | null = null;
  const watchdogOf = () => {
    watchdog ??= sharedHostDeathWatchdog({ removeCommand, env: clientEnv() });
    return watchdog;
  };
  const run = (args: string[]) =>
    execa(options.binary, [...globalArgs, ...args], {
      env: clientEnv(),
      extendEnv: false,
      reject: false,
      timeout: 30_000,
    });
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
    async engineVersion() {
      const result = await run(options.versionArgs ?? ["version", "--format", "{{.Server.Version}}"]);
      const version = String(result.stdout).trim();
      return result.exitCode === 0 && version !== "" ? version : undefined;
    },
    plan(spec: SandboxSpec): SpawnPlan {
      const workDir = spec.config.workDir ?? "/workspace";
      const environment = containerEnvironment(spec, clientEnv(), via);
      const args = [
        ...globalArgs,
        ...dockerCompatibleRunArgs(spec, workDir),
        ...environment.args,
        ...(options.runArgs ?? []),
        spec.image,
        ...spec.command,
      ];
      if (environment.descriptor3 === undefined) return { file: options.binary, args, env: environment.env };
      return {
        file: "/bin/sh",
        args: ["-c", ENVIRONMENT_THROUGH_PIPE, "skillbox-sandbox", options.binary, ...args],
        env: environment.env,
        descriptor3: environment.descriptor3,
      };
    },
    async prepare(spec: SandboxSpec) {
      // The engine keeps a container running when its client's host dies; the watchdog removes
      // it then, since the host's own exit handlers never run after SIGKILL.
      watchdogOf()?.watch(spec.id);
    },
    async finish(spec: SandboxSpec) {
      if (via === "file") removeEnvironmentFile(spec.id);
      watchdog?.release(spec.id);
      return {};
    },
    async remove(id: string) {
      await run([...removeArgs, id]);
    },
    async removeOrphans() {
      // Only sandboxes with a full owner label are judged; an owner that cannot be judged dead
      // from here (another machine or container sharing the engine) keeps its sandboxes.
      const listed = await run(["ps", "--all", "--quiet", "--filter", `label=${SANDBOX_OWNER_LABEL}`]);
      const ids = listed.exitCode === 0 ? String(listed.stdout).split("\n").filter(Boolean) : [];
      if (ids.length === 0) return [];
      const inspected = await run([
        "inspect",
        "--format",
        `{{.Name}}\t{{index .Config.Labels "${SANDBOX_OWNER_LABEL}"}}`,
        ...ids,
      ]);
      const dead: string[] = [];
      // A container that ended between the two calls makes `inspect` fail for it alone.
      for (const line of String(inspected.stdout).split("\n")) {
        const [name = "", label = ""] = line.split("\t");
        const owner = parseSandboxOwner(label.trim());
        if (owner !== undefined && isSandboxOwnerDead(owner)) dead.push(name.replace(/^\//, ""));
      }
      if (dead.length === 0) return [];
      await run([...removeArgs, ...dead]);
      if (via === "file") for (const name of dead) removeEnvironmentFile(name);
      return dead;
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
