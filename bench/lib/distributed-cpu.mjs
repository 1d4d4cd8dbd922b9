// CPU time of the processes of a distributed deployment on this machine (Linux /proc), so that a
// run becomes "CPU ms per execution" for each part: what caps throughput once the machine's
// cores are busy, and what adding a worker process on the same machine cannot add.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc's utime/stime (`getconf CLK_TCK`, 100 on Linux). */
const TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** `[pid, ppid, utime + stime in ticks]` of every process in /proc. */
function processTable() {
  const table = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // Exited meanwhile.
    }
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    table.push([Number(entry), Number(fields[1]), Number(fields[11]) + Number(fields[12])]);
  }
  return table;
}

/**
 * CPU ms used so far by each named process tree (`{ name: rootPid }`): the root and every
 * process under it that is still running (PostgreSQL's backends live as long as the pools'
 * connections, which outlast a run). Only the process tables' own figures: no process is touched.
 */
export function readCpu(roots) {
  const table = processTable();
  const children = new Map();
  const ticks = new Map();
  for (const [pid, ppid, used] of table) {
    ticks.set(pid, used);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(pid);
  }
  const result = {};
  for (const [name, root] of Object.entries(roots)) {
    let total = 0;
    const pending = [root];
    while (pending.length > 0) {
      const pid = pending.pop();
      total += ticks.get(pid) ?? 0;
      pending.push(...(children.get(pid) ?? []));
    }
    result[name] = (total / TICKS_PER_SECOND) * 1000;
  }
  return result;
}

/** Adds `after - before` of every tree to `into` (CPU ms, summed over several windows). */
export function addCpu(into, before, after) {
  for (const name of Object.keys(after)) into[name] = (into[name] ?? 0) + after[name] - (before[name] ?? 0);
  return into;
}

/** The processes `parentPid` started that still run, with their command names (`/proc/<pid>/comm`). */
export function childProcesses(parentPid) {
  return processTable()
    .filter(([, ppid]) => ppid === parentPid)
    .map(([pid]) => {
      try {
        return { pid, command: readFileSync(`/proc/${pid}/comm`, "utf8").trim() };
      } catch {
        return { pid, command: "" };
      }
    });
}

/** CPU ms this process used so far (its own threads, not its children). */
export function ownCpu() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
