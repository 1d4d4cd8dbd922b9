import { describe, expect, it } from "vitest";
import { useDistributedCluster } from "./distributed-cluster.js";

const cluster = useDistributedCluster();
const TOTAL = 5000;
/** Executions in flight at once, from the API host. */
const IN_FLIGHT = 64;

describe("5,000 executions across two worker processes", () => {
  it("ends in exactly 5,000 final rows, none duplicated, none left queued or running", async () => {
    const deployment = cluster.deployment("five_thousand");
    const workers = await deployment.startWorkerPair({ concurrency: 32 });
    const api = await deployment.openApiHost();

    const started = performance.now();
    let next = 0;
    const byWorker = new Map<number, number>();
    // IN_FLIGHT lanes, each executing (submit, then wait for the result) one at a time.
    const lanes = Array.from({ length: IN_FLIGHT }, async () => {
      const statuses: string[] = [];
      while (next < TOTAL) {
        next++;
        const execution = await api.executor.execute("echo", { msg: "x" }, { apiKeyId: "load" });
        statuses.push(execution.status);
        byWorker.set(execution.output?.pid, (byWorker.get(execution.output?.pid) ?? 0) + 1);
      }
      return statuses;
    });
    const statuses = (await Promise.all(lanes)).flat();
    const seconds = (performance.now() - started) / 1000;
    // Reported, not asserted: what the lead puts in the report.
    console.log(
      `${TOTAL} executions in ${seconds.toFixed(1)} s (${Math.round(TOTAL / seconds)}/s); by worker pid: ${JSON.stringify([...byWorker])}`,
    );

    expect(statuses).toHaveLength(TOTAL);
    expect(statuses.every((status) => status === "success")).toBe(true);
    expect(new Set(byWorker.keys())).toEqual(new Set(workers.map((worker) => worker.pid)));
    expect(
      await deployment.sql(
        `SELECT count(*), count(DISTINCT id),
           count(*) FILTER (WHERE status = 'success' AND attempts = 1 AND finished_at IS NOT NULL),
           count(*) FILTER (WHERE status IN ('queued', 'running', 'pending'))
         FROM skill_executions`,
      ),
    ).toEqual([[String(TOTAL), String(TOTAL), String(TOTAL), "0"]]);
    expect(await deployment.sql("SELECT count(*) FROM skill_execution_jobs")).toEqual([["0"]]);
  }, 120_000);
});
