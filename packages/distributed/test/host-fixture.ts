import type { SkillHandler } from "@skillbox/core";
import { createDistributedHost, type DistributedHost, type DistributedRole } from "@skillbox/distributed";
import { type RunningPostgres, startPostgresCluster } from "@skillbox/test-helpers/postgres-cluster";
import { type RunningRedis, startRedisServer } from "@skillbox/test-helpers/redis-server";
import { afterAll, afterEach, beforeAll } from "vitest";

/** Options of {@link HostFixture.openHost}. */
export interface OpenHostOptions {
  /** The shared record (a database of the file's cluster, from {@link HostFixture.database}). */
  database: string;
  role: DistributedRole;
  prefix: string;
  /** What the host's `echo` skill (input `{ msg: string }`) does. */
  echo: SkillHandler<{ msg: string }>;
}

/** What a test file gets from {@link useDistributedHosts}. */
export interface HostFixture {
  /** A new, empty database of the file's cluster, for one test's hosts to share. */
  database(): string;
  /** An in-process host on the file's Redis with the echo skill loaded, its worker started; closed after the test. */
  openHost(options: OpenHostOptions): Promise<DistributedHost>;
}

/** Logs nothing: the tests assert on results, not on what a host logs. */
function quietLogger() {
  const nothing = () => {};
  return { debug: nothing, info: nothing, warn: nothing, error: nothing };
}

/**
 * One PostgreSQL cluster and one redis-server for the calling test file, and the hosts each test
 * opens on them, closed when it ends. Call it at the top level of the file.
 */
export function useDistributedHosts(): HostFixture {
  let postgres: RunningPostgres | undefined;
  let redis: RunningRedis | undefined;
  let databases = 0;
  const hosts: DistributedHost[] = [];
  beforeAll(async () => {
    [postgres, redis] = await Promise.all([startPostgresCluster(), startRedisServer()]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([postgres?.stop(), redis?.stop()]);
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.close({ graceMs: 1000 });
  });
  const started = (): { postgres: RunningPostgres; redis: RunningRedis } => {
    if (postgres === undefined || redis === undefined)
      throw new Error("the servers start in beforeAll: use the fixture in a test");
    return { postgres, redis };
  };

  return {
    database: () => started().postgres.createDatabase(`hosts_${process.pid}_${++databases}`),
    async openHost({ database, role, prefix, echo }) {
      const host = await createDistributedHost({
        database,
        queue: started().redis.url,
        role,
        prefix,
        logger: quietLogger(),
      });
      hosts.push(host);
      host.registry.register({
        name: "echo",
        version: "1.0.0",
        input: { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] },
        handler: "echo",
      });
      host.executor.registerHandler("echo", echo);
      await host.startWorker();
      return host;
    },
  };
}
