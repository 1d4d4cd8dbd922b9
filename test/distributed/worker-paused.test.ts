import { describe, expect, it } from "vitest";
import {
  type CounterLine,
  readLines,
  useDistributedCluster,
  type WorkerProcess,
} from "./distributed-cluster.js";

const cluster = useDistributedCluster();
/** Short leases: a paused worker loses its claims within seconds. */
const LEASE_MS = 1500;
/** The database's clock, in ms (the one leases and heartbeats are measured on). */
const DATABASE_NOW = "floor(extract(epoch from clock_timestamp()) * 1000)::bigint";

describe("a worker paused with SIGSTOP past its lease, then resumed", () => {
  it.each([
    { skill: "counter", final: "interrupted", runs: 1 },
    { skill: "counter-rerun", final: "success", runs: 2 },
  ])(
    "keeps the newer outcome of a $skill execution ($final): the late write is refused, and the worker serves on",
    async ({ skill, final, runs }) => {
      const deployment = cluster.deployment(`paused_${skill.replace("-", "_")}`);
      const workers = await deployment.startWorkerPair({ leaseMs: LEASE_MS });
      const api = await deployment.openApiHost();
      const file = `${cluster.scratch}/${skill}.jsonl`;

      // The first run waits 10 s (a rerun returns at once): long enough to be paused mid-run.
      const id = await api.executor.submit(skill, { file, ms: 10_000 }, { apiKeyId: "alice" });
      await expect.poll(() => readLines(file).length, { timeout: 30_000 }).toBe(1);
      const paused = workers.find(
        (worker) => worker.pid === readLines<CounterLine>(file)[0]?.pid,
      ) as WorkerProcess;
      const other = workers.find((worker) => worker !== paused) as WorkerProcess;
      paused.signal("SIGSTOP");

      // Its lease expires; the other hosts' sweepers interrupt the execution or requeue it for the other worker.
      const ended = await api.executor.wait(id, { apiKeyId: "alice", timeoutMs: 25_000 });
      expect(ended.status).toBe(final);
      const recorded = await deployment.sql(
        `SELECT status, coalesce(output, ''), finished_at FROM skill_executions WHERE id = '${id}'`,
      );

      const [[resumedAt] = []] = await deployment.sql(`SELECT ${DATABASE_NOW}`);
      paused.signal("SIGCONT");
      // Its run ends there (the renewal finds the claim gone, or the commit is refused): a heartbeat
      // after the resume reports no run under way.
      await expect
        .poll(
          () =>
            deployment.sql(
              `SELECT running FROM skillbox_workers WHERE worker_id = '${paused.workerId}' AND last_heartbeat_at > ${resumedAt}`,
            ),
          { timeout: 30_000 },
        )
        .toEqual([["0"]]);
      // The row still holds the newer outcome, untouched.
      expect(
        await deployment.sql(
          `SELECT status, coalesce(output, ''), finished_at FROM skill_executions WHERE id = '${id}'`,
        ),
      ).toEqual(recorded);
      const lines = readLines<CounterLine>(file);
      expect(lines.map((line) => line.pid)).toEqual(runs === 2 ? [paused.pid, other.pid] : [paused.pid]);
      if (runs === 2) expect(ended.output).toMatchObject({ pid: other.pid });
      else expect(ended.error?.code).toBe("INTERRUPTED");

      // It keeps serving: with the other worker gone, the next job is its own.
      await other.stop();
      const next = await api.executor.execute("echo", { msg: "still here" }, { apiKeyId: "alice" });
      expect(next).toMatchObject({ status: "success", output: { pid: paused.pid } });
      expect(await deployment.sql("SELECT count(*), count(DISTINCT id) FROM skill_executions")).toEqual([
        ["2", "2"],
      ]);
      expect(await deployment.sql("SELECT count(*) FROM skill_execution_jobs")).toEqual([["0"]]);
    },
    90_000,
  );
});
