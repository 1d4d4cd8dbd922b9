import { readdirSync, readFileSync } from "node:fs";

interface ProcessStat {
  pid: number;
  command: string;
  state: string;
  parentPid: number;
}

/** Parses `/proc/<pid>/stat`; `undefined` once the process is gone. */
function readStat(pid: number): ProcessStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command sits in parentheses and may itself contain spaces or parentheses.
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  const [state = "", parentPid = "0"] = text
    .slice(close + 2)
    .split(" ")
    .slice(0, 2);
  return { pid, command: text.slice(open + 1, close), state, parentPid: Number(parentPid) };
}

/** True while `pid` runs (a zombie waiting to be reaped counts as gone). */
export function isRunning(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== "Z";
}

/** Pids of the Chromium processes `parentPid` started directly (the browser, not its helpers). */
export function chromiumChildren(parentPid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat?.parentPid === parentPid && stat.command.startsWith("chrom") && stat.state !== "Z") {
      pids.push(stat.pid);
    }
  }
  return pids;
}
