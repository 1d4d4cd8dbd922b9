import type { DistributedHost } from "@skillbox/distributed";
import { createHttpApp } from "@skillbox/server";
import { describe, expect, it } from "vitest";
import { useDistributedHosts } from "./host-fixture.js";

const hosts = useDistributedHosts();
const KEYS = { "alice-key": "alice", "bob-key": "bob" };

type HttpApp = ReturnType<typeof createHttpApp>;

/** A distributed host on `database` with the echo skill (`msg: "fail"` throws) and the HTTP API over it. */
async function openHost(
  database: string,
  role: "api" | "both",
): Promise<{ host: DistributedHost; app: HttpApp }> {
  const host = await hosts.openHost({
    database,
    role,
    prefix: "http",
    echo: (input) => {
      if (input.msg === "fail") throw new Error("asked to fail");
      return { echoed: input.msg };
    },
  });
  return {
    host,
    app: createHttpApp({ registry: host.registry, executor: host.executor, apiKeys: KEYS, studio: false }),
  };
}

/** One request to `app` as the owner of `key`; the parsed JSON body. */
async function call(app: HttpApp, method: string, path: string, key: string, json?: unknown) {
  const response = await app.request(`http://localhost${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(json === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the test reads fields of the API's JSON bodies.
  return { status: response.status, body: (await response.json()) as any };
}

function totals(buckets: Array<{ statuses: Record<string, number> }>): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const { statuses } of buckets) {
    for (const [status, count] of Object.entries(statuses)) sums[status] = (sums[status] ?? 0) + count;
  }
  return sums;
}

describe("the HTTP API over a distributed host", () => {
  it("lists, reads and counts the shared record's executions, whichever host submitted them, per caller", async () => {
    const database = hosts.database();
    const front = await openHost(database, "both");
    // Another API host on the same record: what it submits shows on the first one's API.
    const other = await openHost(database, "api");
    const before = Date.now();
    const ran: string[] = [];
    for (const [app, msg] of [
      [front.app, "a"],
      [other.app, "b"],
      [other.app, "fail"],
      [front.app, "c"],
    ] as const) {
      const { body } = await call(app, "POST", "/api/skills/echo/execute", "alice-key", { input: { msg } });
      expect(body.status).toBe(msg === "fail" ? "error" : "success");
      ran.push(body.id);
    }
    const { body: bobs } = await call(other.app, "POST", "/api/skills/echo/execute", "bob-key", {
      input: { msg: "bob" },
    });
    expect(bobs.status).toBe("success");

    const listed = await call(front.app, "GET", "/api/executions", "alice-key");
    expect(listed.status).toBe(200);
    expect(listed.body.executions.map((execution: { id: string }) => execution.id)).toEqual(
      [...ran].reverse(),
    );

    const fromOther = await call(front.app, "GET", `/api/executions/${ran[1]}`, "alice-key");
    expect(fromOther.status).toBe(200);
    expect(fromOther.body).toMatchObject({ id: ran[1], status: "success", output: { echoed: "b" } });
    expect((await call(front.app, "GET", `/api/executions/${bobs.id}`, "alice-key")).status).toBe(404);

    const since = encodeURIComponent(new Date(before - 60_000).toISOString());
    const until = encodeURIComponent(new Date(Date.now() + 60_000).toISOString());
    const timeline = await call(
      front.app,
      "GET",
      `/api/stats/executions?since=${since}&until=${until}`,
      "alice-key",
    );
    expect(timeline.status).toBe(200);
    expect(totals(timeline.body.buckets)).toEqual({ success: 3, error: 1 });
    const bobTimeline = await call(
      front.app,
      "GET",
      `/api/stats/executions?since=${since}&until=${until}`,
      "bob-key",
    );
    expect(totals(bobTimeline.body.buckets)).toEqual({ success: 1 });

    const durations = await call(front.app, "GET", "/api/stats/durations", "alice-key");
    expect(durations.status).toBe(200);
    expect(durations.body.skills).toHaveLength(1);
    const [echo] = durations.body.skills;
    expect(echo).toMatchObject({ skillName: "echo", count: 4 });
    expect(echo.buckets.reduce((sum: number, bucket: { count: number }) => sum + bucket.count, 0)).toBe(4);
    expect(echo.p95DurationMs).toBeGreaterThanOrEqual(echo.p50DurationMs);

    const skills = await call(front.app, "GET", "/api/skills?stats=1", "alice-key");
    expect(skills.status).toBe(200);
    expect(skills.body.skills.find((skill: { name: string }) => skill.name === "echo").stats).toMatchObject({
      executions: 4,
      finished: 4,
      statuses: { success: 3, error: 1 },
      successRate: 0.75,
    });
    const bobSkills = await call(other.app, "GET", "/api/skills?stats=1", "bob-key");
    expect(
      bobSkills.body.skills.find((skill: { name: string }) => skill.name === "echo").stats,
    ).toMatchObject({
      executions: 1,
      statuses: { success: 1 },
    });
  });
});
