import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DRIFTED_SKILLS, SKILLS, useDistributedCluster } from "./distributed-cluster.js";

const cluster = useDistributedCluster();

describe("a worker whose copy of a skill differs", () => {
  it("answers SKILL_VERSION_MISMATCH for the same name@version with other code, running none of it", async () => {
    const deployment = cluster.deployment("version_mismatch");
    // `stamp` is routed to the "drift" queue: only the drifted worker takes it.
    const [drifted] = await Promise.all([
      deployment.startWorker({ dirs: [DRIFTED_SKILLS], queues: ["drift"] }),
      deployment.startWorker({ dirs: [SKILLS] }),
    ]);
    const api = await deployment.openApiHost();
    const file = `${cluster.scratch}/stamps.txt`;

    const refused = await api.executor.execute("stamp", { file }, { apiKeyId: "alice" });
    expect(refused.status).toBe("error");
    expect(refused.error?.code).toBe("SKILL_VERSION_MISMATCH");
    expect(refused.error?.message).toContain("stamp@1.0.0");
    expect(existsSync(file)).toBe(false);
    expect(
      await deployment.sql(
        `SELECT status, error_code, output IS NULL FROM skill_executions WHERE id = '${refused.id}'`,
      ),
    ).toEqual([["error", "SKILL_VERSION_MISMATCH", "t"]]);

    // The same job on a worker with the deployed code runs it.
    await drifted?.stop();
    await deployment.startWorker({ dirs: [SKILLS], queues: ["drift"] });
    const stamped = await api.executor.execute("stamp", { file }, { apiKeyId: "alice" });
    expect(stamped).toMatchObject({ status: "success", output: { stamped: true } });
    expect(readFileSync(file, "utf8")).toBe("stamp\n");
    expect(
      await deployment.sql("SELECT status, count(*) FROM skill_executions GROUP BY status ORDER BY status"),
    ).toEqual([
      ["error", "1"],
      ["success", "1"],
    ]);
  }, 60_000);
});
