import { spawnSync } from "node:child_process";
import { execa } from "execa";
import type { SandboxProvider, SandboxSpec, SpawnPlan } from "../sandbox-types.js";
import {
  containerEnvironment,
  removeEnvironmentFile,
  sandboxOwnerLabelArgs,
} from "./container-cli-provider.js";

/**
 * The `run` flags of Apple's `container` CLI (macOS 26, Apple silicon). Every container is its
 * own lightweight VM, which is the main isolation boundary. The CLI has no `--read-only`,
 * `--pids-limit`, `--memory-swap` or `no-new-privileges`; the pids limit maps to an `nproc`
 * ulimit and the VM has no swap, so `--memory` alone caps memory.
 */
export function appleContainerRunArgs(spec: SandboxSpec, workDir: string): string[] {
  const { config } = spec;
  const args = ["run", "--rm", "--interactive", "--name", spec.id, ...sandboxOwnerLabelArgs()];
  args.push("--cap-drop", "ALL");
  if (!config.network) args.push("--network", "none", "--no-dns");
  args.push("--ulimit", `nproc=${config.pidsLimit}:${config.pidsLimit}`);
  if (config.memoryMb !== undefined) args.push("--memory", `${config.memoryMb}M`);
  // The CLI takes whole CPUs only; round a fractional share up so the limit is never zero.
  if (config.cpus !== undefined) args.push("--cpus", String(Math.max(1, Math.ceil(config.cpus))));
  args.push("--user", config.user);
  args.push("--tmpfs", "/tmp");
  if (workDir !== "/tmp") args.push("--tmpfs", workDir);
  args.push("--workdir", workDir);
  for (const mount of config.mounts) {
    const readOnly = mount.readOnly === false ? "" : ",readonly";
    args.push("--mount", `type=bind,source=${mount.source},target=${mount.target}${readOnly}`);
  }
  return args;
}

/** Apple's `container` CLI on macOS. */
export function createAppleContainerProvider(options: { binary?: string } = {}): SandboxProvider {
  const binary = options.binary ?? "container";
  return {
    name: "apple-container",
    usesImages: true,
    async isAvailable() {
      if (process.platform !== "darwin") return false;
      const result = await execa(binary, ["system", "status"], { reject: false, timeout: 10_000 });
      return result.exitCode === 0;
    },
    plan(spec: SandboxSpec): SpawnPlan {
      const workDir = spec.config.workDir ?? "/workspace";
      // A file, not descriptor 3: whether this CLI reads an env file from a pipe is untested.
      const environment = containerEnvironment(spec, { PATH: process.env.PATH ?? "/usr/bin:/bin" }, "file");
      const args = [
        ...appleContainerRunArgs(spec, workDir),
        ...environment.args,
        spec.image,
        ...spec.command,
      ];
      return { file: binary, args, env: environment.env };
    },
    async finish(spec: SandboxSpec) {
      removeEnvironmentFile(spec.id);
      return {};
    },
    async remove(id: string) {
      await execa(binary, ["delete", "--force", id], { reject: false, timeout: 30_000 });
    },
    removeSync(ids: string[]) {
      if (ids.length > 0)
        spawnSync(binary, ["delete", "--force", ...ids], { stdio: "ignore", timeout: 30_000 });
    },
  };
}
