import { SkillboxError } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { readLines, useDistributedCluster } from "./distributed-cluster.js";

const cluster = useDistributedCluster();
let deployments = 0;

/** The `SkillboxError` code a promise rejects with. */
async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SkillboxError) return error.code;
    throw error;
  }
  throw new Error("it resolved");
}

describe("results across hosts (two worker processes)", () => {
  it("brings results back to callers on the API host: execute, submit + wait, several callers at once", async () => {
    const deployment = cluster.deployment(`results_${++deployments}`);
    const [one, two] = await deployment.startWorkerPair();
    const api = await deployment.openApiHost();

    const executed = await api.executor.execute("echo", { msg: "hi" }, { apiKeyId: "alice" });
    expect(executed).toMatchObject({ status: "success", output: { echoed: "hi" } });
    expect([one.pid, two.pid]).toContain(executed.output.pid);

    const id = await api.executor.submit("echo", { msg: "later" }, { apiKeyId: "alice" });
    const waited = await api.executor.wait(id, { apiKeyId: "alice" });
    expect(waited).toMatchObject({ id, status: "success", output: { echoed: "later" } });

    const callers = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        api.executor.execute("echo", { msg: `caller ${index}` }, { apiKeyId: `caller-${index % 4}` }),
      ),
    );
    callers.forEach((execution, index) => {
      expect(execution).toMatchObject({ status: "success", output: { echoed: `caller ${index}` } });
    });
    for (const execution of callers) expect([one.pid, two.pid]).toContain(execution.output.pid);

    expect(await deployment.sql("SELECT status, count(*) FROM skill_executions GROUP BY status")).toEqual([
      ["success", "42"],
    ]);
    // Every job row is gone once its execution ended (raw inputs included).
    expect(await deployment.sql("SELECT count(*) FROM skill_execution_jobs")).toEqual([["0"]]);
  }, 60_000);

  it("scopes executions to their owner: another API key cannot get, wait for, cancel or list them", async () => {
    const deployment = cluster.deployment(`owners_${++deployments}`);
    await deployment.startWorkerPair();
    const api = await deployment.openApiHost();
    const other = await deployment.openApiHost();

    const id = await api.executor.submit("sleep", { ms: 60_000 }, { apiKeyId: "alice" });
    await expect
      .poll(async () => (await api.executor.getExecution(id))?.status, { timeout: 30_000 })
      .toBe("running");

    expect(await codeOf(other.executor.wait(id, { apiKeyId: "bob" }))).toBe("EXECUTION_NOT_FOUND");
    expect(await codeOf(other.executor.cancel(id, { apiKeyId: "bob" }))).toBe("EXECUTION_NOT_FOUND");
    expect(await codeOf(other.executor.events(id, { apiKeyId: "bob" }).next())).toBe("EXECUTION_NOT_FOUND");
    expect(await other.executor.listExecutions({ owner: "bob" })).toEqual([]);
    expect(
      (await other.executor.listExecutions({ owner: "alice" })).map((execution) => execution.id),
    ).toEqual([id]);
    // Bob's cancel changed nothing: it still runs, with no cancel request recorded.
    expect(await deployment.sql(`SELECT status FROM skill_executions WHERE id = '${id}'`)).toEqual([
      ["running"],
    ]);
    expect(await deployment.sql("SELECT count(*) FROM skill_execution_cancels")).toEqual([["0"]]);

    // Its owner, on the other API host, can.
    const cancelled = await other.executor.cancel(id, { apiKeyId: "alice" });
    expect(cancelled.status).toBe("cancelled");
    expect(
      await deployment.sql(`SELECT status, api_key_id FROM skill_executions WHERE id = '${id}'`),
    ).toEqual([["cancelled", "alice"]]);
  }, 60_000);

  it("keeps one execution for one idempotency key submitted from two API hosts at once", async () => {
    const deployment = cluster.deployment(`idempotency_${++deployments}`);
    const [one, two] = await deployment.startWorkerPair();
    const first = await deployment.openApiHost();
    const second = await deployment.openApiHost();
    const file = `${cluster.scratch}/idempotency-${deployments}.jsonl`;

    for (let round = 0; round < 10; round++) {
      const key = `order-${round}`;
      const ids = await Promise.all(
        [first, second, first, second].map((host) =>
          host.executor.submit("counter", { file }, { apiKeyId: "alice", idempotencyKey: key }),
        ),
      );
      expect(new Set(ids).size).toBe(1);
      const done = await second.executor.wait(ids[0] as string, { apiKeyId: "alice" });
      expect(done.status).toBe("success");
      expect([one.pid, two.pid]).toContain((done.output as { pid: number }).pid);
    }
    expect(
      await deployment.sql(
        "SELECT count(*), count(DISTINCT idempotency_key), count(*) FILTER (WHERE status = 'success') FROM skill_executions",
      ),
    ).toEqual([["10", "10", "10"]]);
    // Each ran once: one side effect per key.
    expect(readLines(file)).toHaveLength(10);
  }, 60_000);
});
