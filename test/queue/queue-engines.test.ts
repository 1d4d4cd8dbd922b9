import { execFileSync } from "node:child_process";
import { createConnection } from "node:net";
import { join } from "node:path";
import { postgresBinaries, startPostgresCluster } from "@skillbox/test-helpers/postgres-cluster";
import { startRedisServer } from "@skillbox/test-helpers/redis-server";
import { describe, expect, it } from "vitest";

/** Sends one inline command and reads the first reply line. */
async function redisCommand(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => socket.write(`${command}\r\n`));
    socket.once("data", (data) => {
      socket.destroy();
      resolve(data.toString());
    });
    socket.once("error", reject);
  });
}

describe("queue engines for the distributed tests", () => {
  it("startRedisServer: a loopback redis-server with noeviction, emptied by restart()", async () => {
    const redis = await startRedisServer();
    try {
      expect(await redisCommand(redis.port, "CONFIG GET maxmemory-policy")).toContain("noeviction");
      expect(await redisCommand(redis.port, "SET skillbox-probe 1")).toBe("+OK\r\n");
      await redis.restart();
      expect(await redisCommand(redis.port, "EXISTS skillbox-probe")).toBe(":0\r\n");
    } finally {
      await redis.stop();
    }
  });

  it("startPostgresCluster: a throwaway cluster that takes queries, one database per test", async () => {
    const postgres = await startPostgresCluster();
    try {
      const url = postgres.createDatabase("probe_database");
      expect(url).toBe(`postgres://postgres@127.0.0.1:${postgres.port}/probe_database`);
      const psql = join(postgresBinaries() ?? "", "psql");
      const answer = execFileSync(psql, ["-At", url, "-c", "SELECT current_database()"]).toString().trim();
      expect(answer).toBe("probe_database");
    } finally {
      await postgres.stop();
    }
    await expect(redisOrPostgresDown(postgres.port)).resolves.toBe(true);
  });
});

async function redisOrPostgresDown(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}
