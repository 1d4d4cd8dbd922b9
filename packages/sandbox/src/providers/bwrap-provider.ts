import { SkillboxError } from "@skillbox/core";
import { execa } from "execa";
import type { SandboxProvider, SandboxSpec, SpawnPlan } from "../sandbox-types.js";
import { createSandboxCgroup, removeOrphanCgroups, type SandboxCgroup } from "./sandbox-cgroup.js";

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * Moves the shell into each cgroup given before `--`, then execs the rest: the sandbox's first
 * process is inside its limits before it can fork.
 */
const ENTER_CGROUPS = 'while [ "$1" != -- ]; do echo $$ >"$1" || exit 125; shift; done; shift; exec "$@"';

/** bwrap flags for a spec: the host root read-only, fresh namespaces, no capabilities. */
export function bwrapArgs(spec: SandboxSpec, workDir: string): string[] {
  const { config } = spec;
  const [uid, gid = uid] = config.user.split(":");
  const tmpfsBytes = String(config.tmpfsSizeMb * 1024 * 1024);
  const args = ["--die-with-parent", "--new-session", "--unshare-all"];
  if (config.network) args.push("--share-net");
  args.push("--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev");
  args.push("--size", tmpfsBytes, "--tmpfs", "/tmp");
  if (workDir.startsWith("/tmp/")) args.push("--dir", workDir);
  else if (workDir !== "/tmp") args.push("--size", tmpfsBytes, "--tmpfs", workDir);
  for (const mount of config.mounts) {
    args.push(mount.readOnly === false ? "--bind" : "--ro-bind", mount.source, mount.target);
  }
  args.push("--unshare-user", "--uid", String(uid), "--gid", String(gid), "--disable-userns");
  args.push("--cap-drop", "ALL", "--hostname", "skillbox", "--chdir", workDir);
  return args;
}

/** Options of {@link createBwrapProvider}. */
export interface BwrapProviderOptions {
  binary?: string;
}

/**
 * Bubblewrap: no image and no engine — the host's root read-only in fresh namespaces, a tmpfs
 * work dir, no network, and CPU/memory/pids limits through a cgroup of its own. Starts as fast
 * as a bare process; for local isolation on Linux. The image argument is ignored.
 */
export function createBwrapProvider(options: BwrapProviderOptions = {}): SandboxProvider {
  const binary = options.binary ?? "bwrap";
  const cgroups = new Map<string, SandboxCgroup>();
  return {
    name: "bwrap",
    usesImages: false,
    async isAvailable() {
      if (process.platform !== "linux") return false;
      const result = await execa(binary, ["--ro-bind", "/", "/", "--unshare-all", "true"], {
        reject: false,
        timeout: 10_000,
      });
      return result.exitCode === 0;
    },
    async engineVersion() {
      // `bubblewrap 0.8.0`
      const result = await execa(binary, ["--version"], { reject: false, timeout: 10_000 });
      const version = /(\d+\.\d+[^\s]*)/.exec(String(result.stdout))?.[1];
      return result.exitCode === 0 ? version : undefined;
    },
    async prepare(spec: SandboxSpec) {
      if (!spec.config.readOnly) {
        throw new SkillboxError(
          "SANDBOX_CONFIG_INVALID",
          "sandbox config: `config.readOnly` cannot be false with the bwrap provider, whose root is the host's own; " +
            "write to the work dir, or use a container provider (SKILLBOX_SANDBOX_RUNTIME=podman)",
        );
      }
      const cgroup = createSandboxCgroup(spec.id, spec.config);
      if (cgroup === undefined && (spec.config.memoryMb !== undefined || spec.config.cpus !== undefined)) {
        throw new SkillboxError(
          "SANDBOX_CONFIG_INVALID",
          "sandbox config: the bwrap provider enforces `memoryMb` and `cpus` with a cgroup, and this process may not " +
            "create one; run as root, delegate a cgroup to this user, or use a container provider",
        );
      }
      if (cgroup !== undefined) cgroups.set(spec.id, cgroup);
    },
    plan(spec: SandboxSpec): SpawnPlan {
      const workDir = spec.config.workDir ?? "/tmp/workspace";
      const env: Record<string, string> = { PATH: DEFAULT_PATH, HOME: workDir };
      for (const name of spec.config.inheritEnv) {
        const value = process.env[name];
        if (value !== undefined) env[name] = value;
      }
      Object.assign(env, spec.env);
      // The sandbox's environment goes to bwrap on descriptor 3: it never becomes the host-side
      // environment of sh or bwrap (no LD_PRELOAD for them), and values stay out of `ps`.
      const environmentArgs = [
        "--clearenv",
        ...Object.entries(env).flatMap(([name, value]) => ["--setenv", name, value]),
      ];
      const descriptor3 = `${environmentArgs.join("\0")}\0`;
      const hostEnv = { PATH: process.env.PATH ?? DEFAULT_PATH };
      const command = [binary, "--args", "3", ...bwrapArgs(spec, workDir), "--", ...spec.command];
      const cgroup = cgroups.get(spec.id);
      if (cgroup === undefined) {
        const [file = binary, ...args] = command;
        return { file, args, env: hostEnv, descriptor3 };
      }
      const args = ["-c", ENTER_CGROUPS, "skillbox-sandbox", ...cgroup.procsFiles, "--", ...command];
      return { file: "/bin/sh", args, env: hostEnv, descriptor3 };
    },
    async remove(id: string) {
      cgroups.get(id)?.kill();
    },
    removeSync(ids: string[]) {
      for (const id of ids) cgroups.get(id)?.kill();
    },
    // bwrap itself dies with its host (`--die-with-parent`), and its pid namespace with it; the
    // cgroup folders of a host killed with SIGKILL are what is left.
    removeOrphans: () => (process.platform === "linux" ? removeOrphanCgroups() : Promise.resolve([])),
    async finish(spec: SandboxSpec) {
      const cgroup = cgroups.get(spec.id);
      cgroups.delete(spec.id);
      if (cgroup === undefined) return {};
      const oomKilled = cgroup.wasOomKilled();
      // The last processes of the namespace may still be exiting: the folders go once they have,
      // without holding up the result.
      void cgroup.remove();
      return { oomKilled };
    },
  };
}
