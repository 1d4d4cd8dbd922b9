import { startPostgresCluster } from "@skillbox/test-helpers/postgres-cluster";
import { startRedisServer } from "@skillbox/test-helpers/redis-server";
import { describe, expect, it } from "vitest";
import { describeResult } from "./child-processes.js";
import { expectSuccess, printedJson } from "./cli-expectations.js";
import type { InstalledProject } from "./installed-project.js";
import { interceptorFixture } from "./skill-fixtures.js";

/**
 * A distributed deployment from the installed tarballs: `skillbox worker` (which loads BullMQ and
 * pg from @skillbox/distributed, found through the CLI's dependency) takes an execution that
 * `skillbox run` records in PostgreSQL and dispatches through Redis, with the interceptor of the
 * worker's folder around it. A layout that hides @skillbox/distributed or its drivers from the
 * CLI fails here.
 */
export function describeDistributedSteps(installed: () => InstalledProject): void {
  describe("a distributed deployment (PostgreSQL + Redis)", () => {
    it("skillbox worker runs what skillbox run submits, and skillbox doctor lists the worker", async () => {
      const project = installed();
      project.write(interceptorFixture("distributed-demo/plugins"));
      const [postgres, redis] = await Promise.all([startPostgresCluster(), startRedisServer()]);
      try {
        const environment = {
          SKILLBOX_DB: postgres.createDatabase(`installed_${project.layout}`),
          SKILLBOX_QUEUE: redis.url,
        };
        const worker = project.startCli(["worker", "plugins", "--concurrency", "2"], {
          cwd: "distributed-demo",
          environment,
        });
        try {
          await worker.waitForOutput(/worker \S+ ready/);
          const run = await project.cli(["run", "greet", "--input", '{"name":"Ada"}', "--json"], {
            cwd: "distributed-demo",
            environment,
          });
          expectSuccess(run);
          expect(printedJson(run), describeResult(run)).toMatchObject({
            status: "success",
            output: { message: "HELLO, ADA! (shouted)" },
          });
          const doctor = await project.cli(["doctor", "--json"], { cwd: "distributed-demo", environment });
          expectSuccess(doctor);
          const report = printedJson(doctor) as { workers: { skills: { name: string }[] }[] };
          expect(report.workers, describeResult(doctor)).toHaveLength(1);
          expect(report.workers[0]?.skills.map((skill) => skill.name)).toContain("greet");
        } finally {
          await worker.stop("SIGTERM");
        }
        const stopped = await worker.finished();
        expect(stopped.code, describeResult(stopped)).toBe(0);
      } finally {
        await Promise.all([postgres.stop(), redis.stop()]);
      }
    });
  });
}
