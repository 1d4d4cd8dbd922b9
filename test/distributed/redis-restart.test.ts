import { describe, expect, it } from "vitest";
import { readLines, useDistributedCluster } from "./distributed-cluster.js";

const cluster = useDistributedCluster();
const BEFORE = 150;
const DURING = 50;

describe("Redis restarted mid-load (its data gone)", () => {
  it("loses no execution and ends each once: running ones commit, queued ones are added again by the sweeper", async () => {
    const deployment = cluster.deployment("redis_restart");
    await deployment.startWorkerPair({ concurrency: 8 });
    const api = await deployment.openApiHost();
    const file = `${cluster.scratch}/restart.jsonl`;

    const ids: string[] = [];
    for (let index = 0; index < BEFORE; index++) {
      ids.push(await api.executor.submit("counter", { file, ms: 100 }, { apiKeyId: "alice" }));
    }
    // Some run, most wait in Redis when it goes away with every job in it.
    await expect.poll(() => readLines(file).length, { timeout: 30_000 }).toBeGreaterThan(0);
    const restarting = cluster.redis.restart();
    // Submitted while Redis restarts: the rows commit; the adds may fail and are healed later.
    for (let index = 0; index < DURING; index++) {
      ids.push(await api.executor.submit("counter", { file, ms: 100 }, { apiKeyId: "alice" }));
    }
    await restarting;
    const waiting = await deployment.sql(
      "SELECT count(*) FROM skill_executions WHERE status IN ('queued', 'running')",
    );
    expect(Number(waiting[0]?.[0])).toBeGreaterThan(0);

    const ended = await Promise.all(
      ids.map((id) => api.executor.wait(id, { apiKeyId: "alice", timeoutMs: 80_000 })),
    );
    expect(ended.every((execution) => execution.status === "success")).toBe(true);
    expect(
      await deployment.sql(
        "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE status = 'success'), count(*) FILTER (WHERE attempts = 1) FROM skill_executions",
      ),
    ).toEqual([[String(ids.length), String(ids.length), String(ids.length), String(ids.length)]]);
    expect(await deployment.sql("SELECT count(*) FROM skill_execution_jobs")).toEqual([["0"]]);
    // Each handler ran exactly once: one side effect per execution, none twice.
    const runs = readLines<{ executionId: string }>(file).map((line) => line.executionId);
    expect(runs).toHaveLength(ids.length);
    expect(new Set(runs)).toEqual(new Set(ids));
  }, 90_000);
});
