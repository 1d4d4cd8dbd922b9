import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { currentSandboxOwner, isSandboxOwnerDead } from "../sandbox-owner.js";

const CGROUP_ROOT = "/sys/fs/cgroup";
const CPU_PERIOD_US = 100_000;

/** Limits a cgroup enforces for a sandbox that has no container engine (bwrap). */
export interface CgroupLimits {
  memoryMb: number | undefined;
  pidsLimit: number;
  cpus: number | undefined;
}

/** One sandbox's cgroup: where to put its first process, and what the kernel reported. */
export interface SandboxCgroup {
  /** The `cgroup.procs` files a process must be written to (one per v1 hierarchy, one on v2). */
  procsFiles: string[];
  /** Whether the kernel's OOM killer ended a process of this cgroup. */
  wasOomKilled(): boolean;
  /** Kills every process in the cgroup (synchronous, so it works during process shutdown). */
  kill(): void;
  /** Kills what is left and removes the cgroup folders, waiting for exiting processes. */
  remove(): Promise<void>;
}

function writeIfPresent(folder: string, file: string, value: string): void {
  const path = join(folder, file);
  if (existsSync(path)) writeFileSync(path, value);
}

function readCounter(path: string, key: string): number {
  try {
    const line = readFileSync(path, "utf8")
      .split("\n")
      .find((entry) => entry.startsWith(`${key} `));
    return line === undefined ? 0 : Number(line.split(" ")[1]);
  } catch {
    return 0;
  }
}

const REMOVE_ATTEMPTS = 50;
const REMOVE_RETRY_MS = 20;

function killAll(folders: string[]): void {
  for (const folder of folders) {
    let pids: string[];
    try {
      pids = readFileSync(join(folder, "cgroup.procs"), "utf8").split("\n").filter(Boolean);
    } catch {
      continue;
    }
    for (const pid of pids) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  }
}

/** rmdir fails with EBUSY while a killed process is still exiting; try again for up to a second. */
async function killAndRemove(folders: string[]): Promise<void> {
  for (let attempt = 0; attempt < REMOVE_ATTEMPTS; attempt++) {
    killAll(folders);
    const left = folders.filter((folder) => {
      try {
        rmdirSync(folder);
        return false;
      } catch (error) {
        return (error as NodeJS.ErrnoException).code !== "ENOENT";
      }
    });
    if (left.length === 0) return;
    folders = left;
    await new Promise((resolve) => setTimeout(resolve, REMOVE_RETRY_MS));
  }
}

/**
 * A sandbox's cgroup folder is named `<pid namespace>-<pid>-<start time>.<id>` after its owner,
 * so the start-up sweep can tell a dead host's leftovers from a live host's fresh, still empty,
 * cgroup. cgroups belong to one boot, so the boot id is implied.
 */
function folderName(id: string): string {
  const owner = currentSandboxOwner();
  const namespace = /\[(\d+)\]/.exec(owner.pidNamespace)?.[1] ?? "0";
  return `${namespace}-${owner.pid}-${owner.startTime}.${id}`;
}

const FOLDER_NAME = /^(\d+)-(\d+)-([^.]+)\.(.+)$/;

/** The owner of a cgroup folder named by {@link folderName}, dead or not; `false` when unknown. */
function hasDeadOwner(name: string): boolean {
  const match = FOLDER_NAME.exec(name);
  if (match === null) return false;
  const here = currentSandboxOwner();
  const [, namespace = "", pid = "", startTime = ""] = match;
  if (here.pidNamespace !== `pid:[${namespace}]`) return false;
  return isSandboxOwnerDead({
    boot: here.boot,
    pidNamespace: here.pidNamespace,
    pid: Number(pid),
    startTime,
  });
}

/** The folders holding sandbox cgroups: the v2 one, or one per v1 hierarchy. */
function parentFolders(): string[] {
  if (existsSync(join(CGROUP_ROOT, "cgroup.controllers"))) return [join(CGROUP_ROOT, "skillbox")];
  return ["pids", "memory", "cpu"].map((controller) => join(CGROUP_ROOT, controller, "skillbox"));
}

/**
 * Kills what is left in the cgroups of sandboxes whose owner is dead and removes them; returns
 * the sandbox ids. A live owner's cgroups are never touched.
 */
export async function removeOrphanCgroups(): Promise<string[]> {
  const folders: string[] = [];
  const ids = new Set<string>();
  for (const parent of parentFolders()) {
    let names: string[];
    try {
      names = readdirSync(parent);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!hasDeadOwner(name)) continue;
      folders.push(join(parent, name));
      ids.add(FOLDER_NAME.exec(name)?.[4] ?? name);
    }
  }
  if (folders.length > 0) await killAndRemove(folders);
  return [...ids];
}

function createUnified(id: string, limits: CgroupLimits): SandboxCgroup {
  const parent = join(CGROUP_ROOT, "skillbox");
  mkdirSync(parent, { recursive: true });
  // Controllers must be enabled for the children of every level down to our own.
  for (const level of [CGROUP_ROOT, parent]) {
    writeIfPresent(level, "cgroup.subtree_control", "+memory +pids +cpu");
  }
  const folder = join(parent, folderName(id));
  mkdirSync(folder);
  writeIfPresent(folder, "pids.max", String(limits.pidsLimit));
  if (limits.memoryMb !== undefined) {
    writeIfPresent(folder, "memory.max", String(limits.memoryMb * 1024 * 1024));
    writeIfPresent(folder, "memory.swap.max", "0");
  }
  if (limits.cpus !== undefined) {
    writeIfPresent(folder, "cpu.max", `${Math.round(limits.cpus * CPU_PERIOD_US)} ${CPU_PERIOD_US}`);
  }
  return {
    procsFiles: [join(folder, "cgroup.procs")],
    wasOomKilled: () => readCounter(join(folder, "memory.events"), "oom_kill") > 0,
    kill: () => killAll([folder]),
    remove: () => killAndRemove([folder]),
  };
}

function createLegacy(id: string, limits: CgroupLimits): SandboxCgroup {
  const folders: string[] = [];
  const hierarchy = (controller: string) => {
    const folder = join(CGROUP_ROOT, controller, "skillbox", folderName(id));
    mkdirSync(folder, { recursive: true });
    folders.push(folder);
    return folder;
  };
  writeFileSync(join(hierarchy("pids"), "pids.max"), String(limits.pidsLimit));
  let memoryFolder: string | undefined;
  if (limits.memoryMb !== undefined) {
    memoryFolder = hierarchy("memory");
    const bytes = String(limits.memoryMb * 1024 * 1024);
    writeFileSync(join(memoryFolder, "memory.limit_in_bytes"), bytes);
    // memory+swap equal to memory: no swap (present only with swap accounting on).
    writeIfPresent(memoryFolder, "memory.memsw.limit_in_bytes", bytes);
  }
  if (limits.cpus !== undefined) {
    const cpuFolder = hierarchy("cpu");
    writeFileSync(join(cpuFolder, "cpu.cfs_period_us"), String(CPU_PERIOD_US));
    writeFileSync(join(cpuFolder, "cpu.cfs_quota_us"), String(Math.round(limits.cpus * CPU_PERIOD_US)));
  }
  return {
    procsFiles: folders.map((folder) => join(folder, "cgroup.procs")),
    wasOomKilled: () =>
      memoryFolder !== undefined && readCounter(join(memoryFolder, "memory.oom_control"), "oom_kill") > 0,
    kill: () => killAll(folders),
    remove: () => killAndRemove(folders),
  };
}

/**
 * Creates a cgroup for one sandbox (cgroup v2, or the v1 memory/pids/cpu hierarchies). Returns
 * `undefined` when this process may not create cgroups (not root, nothing delegated).
 */
export function createSandboxCgroup(id: string, limits: CgroupLimits): SandboxCgroup | undefined {
  try {
    if (existsSync(join(CGROUP_ROOT, "cgroup.controllers"))) return createUnified(id, limits);
    if (existsSync(join(CGROUP_ROOT, "pids"))) return createLegacy(id, limits);
    return undefined;
  } catch (error) {
    if (
      (error as NodeJS.ErrnoException).code === "EACCES" ||
      (error as NodeJS.ErrnoException).code === "EROFS"
    ) {
      return undefined;
    }
    throw error;
  }
}
