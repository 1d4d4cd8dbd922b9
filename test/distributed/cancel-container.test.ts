import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadSkills } from "@skillbox/loader";
import {
  containersLabelled,
  describeWithEngine,
  podmanRequirement,
  removeContainersLabelled,
  TEST_IMAGE,
} from "@skillbox/test-helpers/engine-availability";
import { expect, it } from "vitest";
import { useDistributedCluster } from "./distributed-cluster.js";

/** The label the sandbox package puts on each container, valued with the pid of the process that started it. */
const SANDBOX_LABEL = "io.skillbox.sandbox";

/**
 * Writes a container skill routed to the `sandbox` queue into `folder`: a TypeScript handler with
 * no Dockerfile that hangs for ever when asked to (it never looks at its signal: only killing its
 * container stops it) and otherwise answers at once. Written at run time, under the cluster's
 * scratch folder, so the image is this Node's test image and the loader's snapshots stay out of
 * the repository.
 */
function writeContainerSkill(folder: string): string {
  const skill = join(folder, "sandboxed");
  mkdirSync(skill, { recursive: true });
  const manifest = {
    name: "sandboxed",
    version: "1.0.0",
    description: "Hangs in its container until killed, or answers at once",
    input: { type: "object", properties: { hang: { type: "boolean" } } },
    handler: "./index.ts",
    runtime: "container",
    queue: "sandbox",
    // Far beyond the test: the run ends by the cancel, never by its timeout.
    timeoutMs: 600_000,
    sandbox: { image: TEST_IMAGE, network: false, memoryMb: 128 },
  };
  writeFileSync(join(skill, "skill.json"), JSON.stringify(manifest, null, 2));
  writeFileSync(
    join(skill, "index.ts"),
    `export default function sandboxed(input: { hang?: boolean }): unknown {
  if (input.hang !== true) return { answered: true };
  // The interval keeps the runner's event loop (and so the container) alive.
  return new Promise(() => {
    setInterval(() => {}, 1_000);
  });
}
`,
  );
  return folder;
}

describeWithEngine("cancel a container skill across hosts", podmanRequirement(), () => {
  const cluster = useDistributedCluster();

  it("cancels a hanging container run on a sandbox worker from the API host: the container is killed and the worker runs the next one", async () => {
    const deployment = cluster.deployment("cancel_container");
    const dirs = [writeContainerSkill(join(cluster.scratch, "container-skills"))];
    // The only worker, and it takes only the `sandbox` queue the skill is routed to.
    const worker = await deployment.startWorker({ dirs, queues: ["sandbox"] });
    const owned = `${SANDBOX_LABEL}=${worker.pid}`;
    const api = await deployment.openApiHost();
    const loaded = await loadSkills({ dirs, npm: false, registry: api.registry, executor: api.executor });
    try {
      expect(loaded.failed).toEqual([]);

      const id = await api.executor.submit("sandboxed", { hang: true }, { apiKeyId: "alice" });
      // The worker started the run's container (a container start may take seconds on a loaded machine).
      await expect.poll(() => containersLabelled(owned).length, { timeout: 60_000 }).toBe(1);
      expect(await deployment.sql(`SELECT status FROM skill_executions WHERE id = '${id}'`)).toEqual([
        ["running"],
      ]);

      await api.executor.cancel(id, { apiKeyId: "alice", reason: "stop the container" });
      await expect
        .poll(async () => (await api.executor.wait(id, { apiKeyId: "alice" })).status, { timeout: 60_000 })
        .toBe("cancelled");
      // The handler never returns: only killing its container stops it, and the container is removed.
      await expect.poll(() => containersLabelled(owned), { timeout: 60_000 }).toEqual([]);
      expect(
        await deployment.sql(`SELECT status, error_code FROM skill_executions WHERE id = '${id}'`),
      ).toEqual([["cancelled", "CANCELLED"]]);
      expect(
        await deployment.sql(`SELECT count(*) FROM skill_execution_jobs WHERE execution_id = '${id}'`),
      ).toEqual([["0"]]);

      // The worker serves on: its next container run ends, in a container of its own.
      const next = await api.executor.execute("sandboxed", { hang: false }, { apiKeyId: "alice" });
      expect(next).toMatchObject({ status: "success", output: { answered: true } });
      expect(worker.child.exitCode).toBeNull();
      expect(
        await deployment.sql("SELECT status, count(*) FROM skill_executions GROUP BY status ORDER BY status"),
      ).toEqual([
        ["cancelled", "1"],
        ["success", "1"],
      ]);
    } finally {
      loaded.loader.close();
      await worker.stop();
      // The safety net after the assertions: whatever container the worker left.
      removeContainersLabelled(owned);
    }
  }, 240_000);
});
