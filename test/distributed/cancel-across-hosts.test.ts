import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readLines, useDistributedCluster } from "./distributed-cluster.js";

const cluster = useDistributedCluster();

/** The OS threads of process `pid` with their user CPU time in clock ticks (Linux /proc). */
function threadTimes(pid: number): Map<number, number> {
  const times = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      // The fields after the parenthesised name; utime is the 14th field of the line.
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      times.set(Number(tid), Number(fields[11]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return times;
}

describe("cancel across hosts", () => {
  it("cancels a spinning worker-thread run on worker B from the API host: the thread is terminated and B runs the next one", async () => {
    const deployment = cluster.deployment("cancel_spin");
    // Only B takes the "threads" queue `spin` is routed to; A takes the default queue.
    const [a, b] = await Promise.all([
      deployment.startWorker(),
      deployment.startWorker({ queues: ["default", "threads"] }),
    ]);
    const api = await deployment.openApiHost();
    const file = `${cluster.scratch}/spin.jsonl`;
    const threadsBefore = new Set(threadTimes(b.pid).keys());

    const id = await api.executor.submit("spin", { file }, { apiKeyId: "alice" });
    await expect.poll(() => readLines(file).length, { timeout: 30_000 }).toBe(1);
    const [started] = readLines<{ pid: number; threadId: number }>(file);
    expect(started?.pid).toBe(b.pid);
    // The OS thread that spins: a new one of B's that keeps burning CPU (half a second of it, 100 ticks a second).
    let spinning: number | undefined;
    await expect
      .poll(
        () => {
          spinning = [...threadTimes(b.pid)].find(
            ([tid, ticks]) => !threadsBefore.has(tid) && ticks >= 50,
          )?.[0];
          return spinning;
        },
        { timeout: 30_000 },
      )
      .toBeTypeOf("number");
    expect(await deployment.sql(`SELECT status FROM skill_executions WHERE id = '${id}'`)).toEqual([
      ["running"],
    ]);

    await api.executor.cancel(id, { apiKeyId: "alice", reason: "stop spinning" });
    await expect
      .poll(async () => (await api.executor.wait(id, { apiKeyId: "alice" })).status, { timeout: 30_000 })
      .toBe("cancelled");
    // The handler never looks at its signal: only terminating its thread stops it.
    await expect.poll(() => existsSync(`/proc/${b.pid}/task/${spinning}`), { timeout: 30_000 }).toBe(false);
    expect(
      await deployment.sql(`SELECT status, error_code FROM skill_executions WHERE id = '${id}'`),
    ).toEqual([["cancelled", "CANCELLED"]]);
    expect(
      await deployment.sql(`SELECT count(*) FROM skill_execution_jobs WHERE execution_id = '${id}'`),
    ).toEqual([["0"]]);

    // B keeps serving: its next worker-thread run ends, on a new thread; A was never involved.
    const next = await api.executor.execute("spin", { file, forMs: 10 }, { apiKeyId: "alice" });
    expect(next).toMatchObject({ status: "success", output: { pid: b.pid } });
    expect(next.output.threadId).not.toBe(started?.threadId);
    expect(a.child.exitCode).toBeNull();
    expect(
      await deployment.sql("SELECT status, count(*) FROM skill_executions GROUP BY status ORDER BY status"),
    ).toEqual([
      ["cancelled", "1"],
      ["success", "1"],
    ]);
  }, 90_000);

  it("cancels a queued execution from one API host before any worker takes it", async () => {
    const deployment = cluster.deployment("cancel_queued");
    const first = await deployment.openApiHost();
    const second = await deployment.openApiHost();
    const file = `${cluster.scratch}/queued.jsonl`;
    // No worker yet: it stays queued.
    const id = await first.executor.submit("counter", { file }, { apiKeyId: "alice" });
    const cancelled = await second.executor.cancel(id, { apiKeyId: "alice" });
    expect(cancelled.status).toBe("cancelled");
    // A worker starting now finds its job (if any) and never runs it.
    await deployment.startWorkerPair();
    const after = await first.executor.execute("counter", { file }, { apiKeyId: "alice" });
    expect(after.status).toBe("success");
    expect(readLines<{ executionId: string }>(file).map((line) => line.executionId)).toEqual([after.id]);
    expect(await deployment.sql(`SELECT status FROM skill_executions WHERE id = '${id}'`)).toEqual([
      ["cancelled"],
    ]);
  }, 60_000);
});
