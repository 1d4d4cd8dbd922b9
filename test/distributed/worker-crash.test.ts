import { describe, expect, it } from "vitest";
import {
  type CounterLine,
  readLines,
  useDistributedCluster,
  type WorkerProcess,
} from "./distributed-cluster.js";

const cluster = useDistributedCluster();
/** Short leases: a dead worker's executions are recovered within seconds. */
const LEASE_MS = 1500;
/** How long a recovery may take on a loaded 2-core machine; far below BullMQ's default 30 s job lock. */
const RECOVERED_WITHIN_MS = 20_000;

describe("kill -9 of a worker process mid-run", () => {
  it.each([
    { skill: "counter", final: "interrupted", errorCode: "INTERRUPTED", runs: 1 },
    { skill: "counter-rerun", final: "success", errorCode: "", runs: 2 },
  ])(
    "ends a $skill execution once, $final, and the surviving worker runs the next job",
    async ({ skill, final, errorCode, runs }) => {
      const deployment = cluster.deployment(`crash_${skill.replace("-", "_")}`);
      const workers = await deployment.startWorkerPair({ leaseMs: LEASE_MS });
      const api = await deployment.openApiHost();
      const file = `${cluster.scratch}/${skill}.jsonl`;

      const id = await api.executor.submit(skill, { file, ms: 600_000 }, { apiKeyId: "alice" });
      await expect.poll(() => readLines(file).length, { timeout: 30_000 }).toBe(1);
      const [first] = readLines<CounterLine>(file);
      const victim = workers.find((worker) => worker.pid === first?.pid) as WorkerProcess;
      const survivor = workers.find((worker) => worker !== victim) as WorkerProcess;
      expect(victim).toBeDefined();

      victim.signal("SIGKILL");
      expect((await victim.exited()).signal).toBe("SIGKILL");
      // Not a timed assertion but a bound on a broken recovery: the lease (1.5 s) and a sweep (1 s)
      // take seconds; a requeue that waits for BullMQ's own stall detection (30 s locks) fails here.
      const ended = await api.executor.wait(id, { apiKeyId: "alice", timeoutMs: RECOVERED_WITHIN_MS });
      expect(ended.status).toBe(final);

      const lines = readLines<CounterLine>(file);
      expect(lines).toHaveLength(runs);
      expect(lines.every((line) => line.executionId === id)).toBe(true);
      if (runs === 2) {
        // The rerun was the survivor's, and its outcome is the one recorded.
        expect(lines[1]?.pid).toBe(survivor.pid);
        expect(ended.output).toMatchObject({ pid: survivor.pid });
      }
      expect(
        await deployment.sql(
          `SELECT status, coalesce(error_code, ''), finished_at IS NOT NULL FROM skill_executions WHERE id = '${id}'`,
        ),
      ).toEqual([[final, errorCode, "t"]]);
      expect(await deployment.sql("SELECT count(*) FROM skill_execution_jobs")).toEqual([["0"]]);

      const next = await api.executor.execute("echo", { msg: "after the crash" }, { apiKeyId: "alice" });
      expect(next).toMatchObject({
        status: "success",
        output: { echoed: "after the crash", pid: survivor.pid },
      });
      expect(await deployment.sql("SELECT count(*), count(DISTINCT id) FROM skill_executions")).toEqual([
        ["2", "2"],
      ]);
    },
    90_000,
  );
});
