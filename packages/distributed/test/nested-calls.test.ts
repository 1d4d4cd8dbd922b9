import type { DistributedHost } from "@skillbox/distributed";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { useDistributedHosts } from "./host-fixture.js";

const hosts = useDistributedHosts();

/** The skill whose handler calls `echo` once per message of its input (it declares what it calls). */
const FAN_OUT = {
  name: "fan-out",
  version: "1.0.0",
  input: {
    type: "object",
    properties: { msgs: { type: "array", items: { type: "string" } } },
    required: ["msgs"],
  },
  requires: { echo: "^1.0.0" },
  handler: "fan-out",
} as const;

async function openPair(
  prefix: string,
): Promise<{ api: DistributedHost; worker: DistributedHost; database: string }> {
  const database = hosts.database();
  const echo = (input: { msg: string }) => ({ echoed: input.msg });
  const api = await hosts.openHost({ database, role: "api", prefix, echo });
  const worker = await hosts.openHost({ database, role: "worker", prefix, echo });
  for (const host of [api, worker]) {
    host.registry.register({ ...FAN_OUT, requires: { ...FAN_OUT.requires } });
    host.executor.registerHandler("fan-out", async (input: { msgs: string[] }, ctx) => {
      const echoed: unknown[] = [];
      for (const msg of input.msgs) echoed.push(await ctx.call("echo", { msg }));
      return echoed;
    });
  }
  return { api, worker, database };
}

/** Makes the shared record refuse every nested row (a trigger), as a database that fails would. */
async function refuseNestedRows(database: string): Promise<void> {
  const client = new pg.Client({ connectionString: database });
  await client.connect();
  try {
    await client.query(`
      CREATE FUNCTION refuse_nested() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'nested rows refused by the test'; END $$;
      CREATE TRIGGER refuse_nested BEFORE INSERT ON skill_executions
        FOR EACH ROW WHEN (NEW.parent_execution_id IS NOT NULL) EXECUTE FUNCTION refuse_nested();`);
  } finally {
    await client.end();
  }
}

/** Executions in a host's own (local, in-memory) audit trail, whatever their status. */
function localRowCount(host: DistributedHost): number {
  return (host.registry.database.prepare("SELECT COUNT(*) AS n FROM skill_executions").get() as { n: number })
    .n;
}

describe("nested ctx.call on a distributed worker", () => {
  it("records the child in the shared record under its parent, and keeps no local row of it", async () => {
    const { api, worker } = await openPair("nested-1");
    const parent = await api.executor.execute(
      "fan-out",
      { msgs: ["a"] },
      { apiKeyId: "alice", sessionId: "s-1" },
    );
    expect(parent).toMatchObject({ status: "success", output: [{ echoed: "a" }] });
    const children = await api.executor.listExecutions({ parentExecutionId: parent.id });
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({
      skillName: "echo",
      skillVersion: "1.0.0",
      apiKeyId: "alice",
      sessionId: "s-1",
      parentExecutionId: parent.id,
      status: "success",
      input: { msg: "a" },
      output: { echoed: "a" },
      attempts: 1,
    });
    expect(children[0]?.finishedAt).not.toBeNull();
    expect(await api.executor.getExecution(children[0]?.id ?? "")).toEqual(children[0]);
    expect(localRowCount(worker)).toBe(0);
  });

  it("records a failed child with its error, and the parent still sees the failure", async () => {
    const { api, worker } = await openPair("nested-2");
    worker.executor.registerHandler("echo", () => {
      throw new Error("echo broke");
    });
    const parent = await api.executor.execute("fan-out", { msgs: ["x"] });
    expect(parent.status).toBe("error");
    const [child] = await api.executor.listExecutions({ parentExecutionId: parent.id });
    expect(child).toMatchObject({ status: "error", parentExecutionId: parent.id, output: null });
    expect(child?.error?.message).toContain("echo broke");
    expect(localRowCount(worker)).toBe(0);
  });

  it("keeps the local row when the shared record refuses it, and the parent's call still succeeds", async () => {
    const { api, worker, database } = await openPair("nested-4");
    await refuseNestedRows(database);
    const parent = await api.executor.execute("fan-out", { msgs: ["kept"] });
    expect(parent).toMatchObject({ status: "success", output: [{ echoed: "kept" }] });
    expect(await api.executor.countExecutions({ parentExecutionId: parent.id })).toBe(0);
    const kept = worker.registry.database
      .prepare("SELECT parent_execution_id, status, output FROM skill_executions")
      .all();
    expect(kept).toEqual([
      { parent_execution_id: parent.id, status: "success", output: JSON.stringify({ echoed: "kept" }) },
    ]);
  });

  it("leaves no local row after 200 nested runs", async () => {
    const { api, worker } = await openPair("nested-3");
    const msgs = Array.from({ length: 20 }, (_, index) => `m${index}`);
    const parents = await Promise.all(
      Array.from({ length: 10 }, () => api.executor.execute("fan-out", { msgs })),
    );
    for (const parent of parents) expect(parent.status).toBe("success");
    const counts = await Promise.all(
      parents.map((parent) => api.executor.countExecutions({ parentExecutionId: parent.id })),
    );
    expect(counts).toEqual(parents.map(() => 20));
    expect(localRowCount(worker)).toBe(0);
  });
});
