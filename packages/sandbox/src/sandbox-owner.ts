import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

/**
 * The process that started a sandbox, as its label records it: the machine's boot (or host
 * name off Linux), the pid namespace, the pid and the process's start time. Together they tell
 * a dead owner from a live one even when the pid was reused or the label comes from another
 * machine or container sharing the engine.
 */
export interface SandboxOwner {
  /** The kernel's boot id on Linux (`/proc/sys/kernel/random/boot_id`), else `host:<hostname>`. */
  boot: string;
  /** The pid namespace (`pid:[4026531836]`), or `-` off Linux. */
  pidNamespace: string;
  pid: number;
  /** The process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22), or `-` off Linux. */
  startTime: string;
}

/** The label carrying {@link formatSandboxOwner} of the process that started the sandbox. */
export const SANDBOX_OWNER_LABEL = "io.skillbox.sandbox.owner";

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return undefined;
  }
}

/** Field 22 of `/proc/<pid>/stat`; the command name (field 2) may hold spaces and parentheses. */
function startTimeOf(pid: number): string | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields[19];
}

let current: SandboxOwner | undefined;

/** This process as a sandbox owner (computed once). */
export function currentSandboxOwner(): SandboxOwner {
  if (current !== undefined) return current;
  const linux = process.platform === "linux";
  const boot = linux ? readText("/proc/sys/kernel/random/boot_id") : undefined;
  let pidNamespace = "-";
  if (linux) {
    try {
      pidNamespace = readlinkSync("/proc/self/ns/pid");
    } catch {
      // Without /proc the namespace stays unknown, and so no owner can be judged dead.
    }
  }
  current = {
    boot: boot ?? `host:${hostname()}`,
    pidNamespace,
    pid: process.pid,
    startTime: (linux ? startTimeOf(process.pid) : undefined) ?? "-",
  };
  return current;
}

/** The label value: `<boot>/<pid namespace>/<pid>/<start time>`. */
export function formatSandboxOwner(owner: SandboxOwner): string {
  return `${owner.boot}/${owner.pidNamespace}/${owner.pid}/${owner.startTime}`;
}

/** Reads a label value written by {@link formatSandboxOwner}; `undefined` for anything else. */
export function parseSandboxOwner(value: string): SandboxOwner | undefined {
  const parts = value.split("/");
  if (parts.length !== 4) return undefined;
  const [boot = "", pidNamespace = "", pid = "", startTime = ""] = parts;
  if (!/^[1-9][0-9]*$/.test(pid) || boot === "" || pidNamespace === "" || startTime === "") return undefined;
  return { boot, pidNamespace, pid: Number(pid), startTime };
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is just not ours to signal.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether `owner` is certainly dead, judged from this process. Only an owner of this boot and
 * this pid namespace can be judged; anything else (another machine or container sharing the
 * engine, an unreadable label) counts as alive, so a live host's sandboxes are never touched.
 * A pid that now belongs to a process with another start time was reused: its owner is dead.
 */
export function isSandboxOwnerDead(owner: SandboxOwner, here: SandboxOwner = currentSandboxOwner()): boolean {
  if (owner.boot !== here.boot || owner.pidNamespace !== here.pidNamespace) return false;
  if (owner.pid === here.pid) return owner.startTime !== here.startTime && here.startTime !== "-";
  if (!processExists(owner.pid)) return true;
  if (owner.startTime === "-") return false;
  const startTime = startTimeOf(owner.pid);
  return startTime !== undefined && startTime !== owner.startTime;
}
