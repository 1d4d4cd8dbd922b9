import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import {
  createSkillHost,
  EXECUTION_STATUSES,
  type ExecutionStreamEvent,
  isFinalExecutionStatus,
  openDatabase,
  type SkillExecution,
  type SkillHost,
} from "@skillbox/core";
import { afterEach, describe, expect, it } from "vitest";

const FIXTURE = fileURLToPath(new URL("./crash-host.mjs", import.meta.url));
const BUILT_CORE = fileURLToPath(new URL("../../packages/core/dist/index.js", import.meta.url));
const COUNT = 3;
/** How long a host process may take to reach a state (a loaded 2-core machine starts Node slowly). */
const STATE_WITHIN_MS = 30_000;
const silentLogger = { debug() {}, info() {}, warn() {}, error() {} };

type SkillName = "slow" | "slow-idempotent" | "needs-approval";
interface ReadyLine {
  ready: true;
  pid: number;
  ids: Record<SkillName, string[]>;
  statuses: Record<SkillName, string[]>;
}
interface StartedLine {
  started: true;
  pid: number;
  ids: string[];
}
interface EventLine {
  event: { type: ExecutionStreamEvent["type"]; executionId: string; status?: string };
}
interface HandlerRun {
  executionId: string;
  pid: number;
  skill: SkillName;
}

/** A host process started from the fixture, with every line it printed so far. */
interface HostProcess {
  child: ChildProcess;
  lines: unknown[];
  /** Resolves with the first line (already printed or to come) that `matches`. */
  lineMatching<T>(matches: (line: Record<string, unknown>) => boolean): Promise<T>;
}

const children: ChildProcess[] = [];
const hosts: SkillHost[] = [];
const folders: string[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
  for (const child of children.splice(0)) await kill9(child);
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

function startHost(options: { mode: "first" | "second"; database: string; sideFile: string }): HostProcess {
  const child = spawn(process.execPath, [FIXTURE, JSON.stringify({ ...options, count: COUNT })], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => {
    stderr += chunk;
  });
  const lines: unknown[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout! }).on("line", (text) => {
    lines.push(JSON.parse(text));
    for (const waiter of waiters) waiter();
  });
  const lineMatching = <T>(matches: (line: Record<string, unknown>) => boolean) =>
    new Promise<T>((resolve, reject) => {
      const check = () => {
        const found = lines.find((line) => matches(line as Record<string, unknown>));
        if (found === undefined) return;
        cleanup();
        resolve(found as T);
      };
      const onExit = (code: number | null, signal: string | null) => {
        cleanup();
        reject(new Error(`the ${options.mode} host exited (code ${code}, signal ${signal}): ${stderr}`));
      };
      // Not a timed assertion: a bound on how long a broken host can keep the test waiting.
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(
            `the ${options.mode} host never printed the line awaited; its last lines: ${JSON.stringify(lines.slice(-3))}; stderr: ${stderr}`,
          ),
        );
      }, STATE_WITHIN_MS);
      const cleanup = () => {
        waiters.delete(check);
        child.off("exit", onExit);
        clearTimeout(timer);
      };
      waiters.add(check);
      child.once("exit", onExit);
      check();
    });
  return { child, lines, lineMatching };
}

function handlerRuns(sideFile: string): HandlerRun[] {
  if (!existsSync(sideFile)) return [];
  return readFileSync(sideFile, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as HandlerRun);
}

/** Every event of `events(id)` until it ends (it must: the execution is final). */
async function collectEvents(host: SkillHost, id: string): Promise<ExecutionStreamEvent[]> {
  const events: ExecutionStreamEvent[] = [];
  for await (const event of host.executor.events(id)) events.push(event);
  return events;
}

describe("a host killed with SIGKILL (kill -9)", () => {
  it("loses no queued, waiting or running execution, reruns only idempotent ones and ends each with exactly one final state", async () => {
    if (!existsSync(BUILT_CORE)) throw new Error(`${BUILT_CORE} is missing: run \`pnpm build\` first`);
    const folder = mkdtempSync(join(tmpdir(), "skillbox-host-crash-"));
    folders.push(folder);
    const database = join(folder, "skillbox.db");
    const sideFile = join(folder, "handler-runs.jsonl");

    // 1. A host with executions queued, awaiting approval and running, killed without warning.
    const first = startHost({ mode: "first", database, sideFile });
    const ready = await first.lineMatching<ReadyLine>((line) => line.ready === true);
    const runningSlow = ready.ids.slow.find((_, index) => ready.statuses.slow[index] === "running")!;
    const runningIdempotent = ready.ids["slow-idempotent"].find(
      (_, index) => ready.statuses["slow-idempotent"][index] === "running",
    )!;
    const queuedSlow = ready.ids.slow.filter((id) => id !== runningSlow);
    const queuedIdempotent = ready.ids["slow-idempotent"].filter((id) => id !== runningIdempotent);
    const [approved, alsoApproved, rejected] = ready.ids["needs-approval"] as [string, string, string];
    const allIds = [...ready.ids.slow, ...ready.ids["slow-idempotent"], ...ready.ids["needs-approval"]];
    expect(new Set(allIds).size).toBe(3 * COUNT);
    await kill9(first.child);
    expect(first.child.signalCode).toBe("SIGKILL");

    // What the kill left in the file: the same states, nothing final, only the two running handlers run.
    const afterKill = openDatabase({ path: database });
    try {
      const statusOf = afterKill
        .prepare<[string], string>("SELECT status FROM skill_executions WHERE id = ?")
        .pluck();
      const statuses = Object.fromEntries(allIds.map((id) => [id, statusOf.get(id)]));
      expect(statuses[runningSlow]).toBe("running");
      expect(statuses[runningIdempotent]).toBe("running");
      for (const id of [...queuedSlow, ...queuedIdempotent]) expect(statuses[id]).toBe("queued");
      for (const id of ready.ids["needs-approval"]) expect(statuses[id]).toBe("awaiting_approval");
    } finally {
      afterKill.close();
    }
    const runsBeforeRestart = handlerRuns(sideFile);
    expect(runsBeforeRestart.map((run) => run.executionId).sort()).toEqual(
      [runningSlow, runningIdempotent].sort(),
    );
    expect(runsBeforeRestart.every((run) => run.pid === ready.pid)).toBe(true);

    // 2. The next start on the same file picks the work up; it follows every execution's events.
    const second = startHost({ mode: "second", database, sideFile });
    const started = await second.lineMatching<StartedLine>((line) => line.started === true);
    expect(started.pid).not.toBe(ready.pid);
    expect([...started.ids].sort()).toEqual([...allIds].sort());

    // The test decides approvals as a CLI would: its own host that runs no queued work, and
    // leaves recovery to the restarted host.
    const decider = createSkillHost({
      database,
      logger: silentLogger,
      queue: false,
      recoverInterrupted: false,
    });
    hosts.push(decider);
    for (const [index, id] of ready.ids["needs-approval"].entries()) {
      // Still waiting, with what the approver is shown: the reason and the input.
      const waiting = await decider.executor.getExecution(id);
      expect(waiting?.status).toBe("awaiting_approval");
      expect(waiting?.approval?.decision).toBeNull();
      expect(waiting?.approval?.reason).toEqual(expect.any(String));
      expect(waiting?.input).toEqual({ index });
    }
    await decider.executor.approve(approved, { by: "crash-test" });
    await decider.executor.approve(alsoApproved, { by: "crash-test" });
    const rejectedRecord = await decider.executor.reject(rejected, { by: "crash-test", reason: "not today" });
    expect(rejectedRecord.status).toBe("rejected");

    const finals = new Map<string, SkillExecution>();
    for (const id of allIds) {
      finals.set(id, await decider.executor.wait(id, { timeoutMs: STATE_WITHIN_MS }));
    }

    // None lost: every id is there, final, and nothing is left unfinished.
    expect(await decider.executor.countExecutions()).toBe(3 * COUNT);
    const unfinished = EXECUTION_STATUSES.filter((status) => !isFinalExecutionStatus(status));
    expect(await decider.executor.countExecutions({ status: [...unfinished] })).toBe(0);
    for (const id of allIds) expect(isFinalExecutionStatus(finals.get(id)!.status)).toBe(true);

    // The final state of each, and how many times (and where) its handler ran.
    const runs = handlerRuns(sideFile);
    const runsOf = (id: string) => runs.filter((run) => run.executionId === id).map((run) => run.pid);
    expect(finals.get(runningSlow)!.status).toBe("interrupted");
    expect(finals.get(runningSlow)!.error?.code).toBe("INTERRUPTED");
    expect(runsOf(runningSlow)).toEqual([ready.pid]);
    // Declared safe to rerun: back to queued, run again by the new host, which is allowed.
    expect(finals.get(runningIdempotent)!.status).toBe("success");
    expect(runsOf(runningIdempotent)).toEqual([ready.pid, started.pid]);
    for (const id of [...queuedSlow, ...queuedIdempotent]) {
      expect(finals.get(id)!.status).toBe("success");
      expect(runsOf(id)).toEqual([started.pid]);
    }
    for (const id of [approved, alsoApproved]) {
      const execution = finals.get(id)!;
      expect(execution.status).toBe("success");
      expect(execution.approval?.decision).toBe("approved");
      expect(execution.approval?.decidedBy).toBe("crash-test");
      expect(runsOf(id)).toEqual([started.pid]);
    }
    expect(finals.get(rejected)!.status).toBe("rejected");
    expect(finals.get(rejected)!.approval?.decision).toBe("rejected");
    expect(runsOf(rejected)).toEqual([]);
    // Nothing else ran: one rerun (the idempotent one) makes up for the rejected one that never ran.
    expect(runs).toHaveLength(3 * COUNT);

    // Exactly one final state each, as the restarted host's live event streams saw it...
    await Promise.all(allIds.map((id) => second.lineMatching((line) => line.eventsEnded === id)));
    for (const id of allIds) {
      const events = second.lines
        .filter((line): line is EventLine => (line as EventLine).event?.executionId === id)
        .map((line) => line.event);
      const finished = events.filter((event) => event.type === "finished");
      expect(finished).toHaveLength(1);
      expect(events.at(-1)).toEqual(finished[0]);
      expect(finished[0]!.status).toBe(finals.get(id)!.status);
      const finalStatuses = events.filter(
        (event) => event.type === "status" && isFinalExecutionStatus(event.status!),
      );
      expect(finalStatuses.length).toBeLessThanOrEqual(1);
      for (const event of finalStatuses) expect(event.status).toBe(finals.get(id)!.status);
    }
    // ...and as a subscriber after the fact sees it: one "finished" event, the stored record.
    for (const id of allIds) {
      const events = await collectEvents(decider, id);
      expect(events.map((event) => event.type)).toEqual(["finished"]);
      const [finished] = events as [Extract<ExecutionStreamEvent, { type: "finished" }>];
      expect(finished.execution.status).toBe(finals.get(id)!.status);
      expect(finished.execution.finishedAt).toBe(finals.get(id)!.finishedAt);
    }
  }, 120_000);
});
