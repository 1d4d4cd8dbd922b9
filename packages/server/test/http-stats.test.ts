import { describe, expect, it } from "vitest";
import { echoSkill, type TestApi, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();
const KEYS = { "alice-key": "alice", "bob-key": "bob" };

/** Alice runs echo 3 times (one refused by its schema: an error) and `other` once; bob fails echo 4 times. */
async function apiWithExecutions(): Promise<TestApi> {
  const api = await startApi({ apiKeys: KEYS });
  api.host.executor.registerHandler("other", () => ({}));
  api.host.registry.register(echoSkill());
  api.host.registry.register(
    echoSkill({ name: "other", handler: "other", schema: { input: { type: "object" } } }),
  );
  for (const input of [{ msg: "a" }, {}, { msg: "c" }]) {
    await api.call("POST", "/api/skills/echo/execute", { key: "alice-key", json: { input } });
  }
  await api.call("POST", "/api/skills/other/execute", { key: "alice-key", json: { input: {} } });
  for (let index = 0; index < 4; index++) {
    await api.call("POST", "/api/skills/echo/execute", { key: "bob-key", json: { input: {} } });
  }
  return api;
}

/** When the newest execution was created, in epoch ms. */
async function newestCreatedAt(api: TestApi): Promise<number> {
  const [newest] = await api.host.executor.listExecutions({ limit: 1 });
  if (newest === undefined) throw new Error("no execution was recorded");
  return Date.parse(newest.createdAt);
}

/** What the timeline should count for `owner`, worked out from the recorded executions one by one. */
async function expectedStatuses(
  api: TestApi,
  options: { owner: string; since: number; until: number; bucketMs: number; skill?: string },
): Promise<Array<Record<string, number>>> {
  const { owner, since, until, bucketMs, skill } = options;
  const buckets: Array<Record<string, number>> = Array.from(
    { length: Math.ceil((until - since) / bucketMs) },
    () => ({}),
  );
  for (const execution of await api.host.executor.listExecutions({ owner, skill, limit: 1000 })) {
    const at = Date.parse(execution.createdAt);
    if (at < since || at >= until) continue;
    const bucket = buckets[Math.floor((at - since) / bucketMs)] ?? {};
    bucket[execution.status] = (bucket[execution.status] ?? 0) + 1;
  }
  return buckets;
}

/** Every bucket's counts added up by status. */
function totals(buckets: Array<{ statuses: Record<string, number> }>): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const { statuses } of buckets) {
    for (const [status, count] of Object.entries(statuses)) sums[status] = (sums[status] ?? 0) + count;
  }
  return sums;
}

function range(since: number, until: number): string {
  return `since=${encodeURIComponent(new Date(since).toISOString())}&until=${encodeURIComponent(new Date(until).toISOString())}`;
}

describe("createHttpApp: GET /api/stats/executions", () => {
  it("counts the caller's own executions per bucket by status, every bucket present, oldest first", async () => {
    const first = Date.now();
    const api = await apiWithExecutions();
    const until = (await newestCreatedAt(api)) + 1;
    // Two minutes before anything ran: the first buckets are empty whatever the machine's pace.
    const since = first - 2 * 60_000;
    const count = Math.ceil((until - since) / 60_000);

    const alice = await api.call("GET", `/api/stats/executions?${range(since, until)}`, { key: "alice-key" });
    const aliceEcho = await api.call("GET", `/api/stats/executions?${range(since, until)}&skill=echo`, {
      key: "alice-key",
    });
    const bob = await api.call("GET", `/api/stats/executions?${range(since, until)}&bucketSeconds=90`, {
      key: "bob-key",
    });

    expect(alice.status).toBe(200);
    expect(alice.body).toEqual({
      bucketSeconds: 60,
      since: new Date(since).toISOString(),
      until: new Date(until).toISOString(),
      buckets: (await expectedStatuses(api, { owner: "alice", since, until, bucketMs: 60_000 })).map(
        (statuses, index) => ({ start: new Date(since + index * 60_000).toISOString(), statuses }),
      ),
    });
    expect(alice.body.buckets).toHaveLength(count);
    expect(alice.body.buckets.slice(0, 2).map((bucket: { statuses: unknown }) => bucket.statuses)).toEqual([
      {},
      {},
    ]);
    expect(totals(alice.body.buckets)).toEqual({ success: 3, error: 1 });
    expect(totals(aliceEcho.body.buckets)).toEqual({ success: 2, error: 1 });
    expect(bob.body.bucketSeconds).toBe(90);
    expect(bob.body.buckets.map((bucket: { statuses: unknown }) => bucket.statuses)).toEqual(
      await expectedStatuses(api, { owner: "bob", since, until, bucketMs: 90_000 }),
    );
    expect(totals(bob.body.buckets)).toEqual({ error: 4 });
  });

  it("defaults to the last hour in 60 s buckets, and answers an empty range with no buckets", async () => {
    const api = await apiWithExecutions();
    const at = await newestCreatedAt(api);

    const defaults = await api.call("GET", "/api/stats/executions", { key: "alice-key" });
    const empty = await api.call("GET", `/api/stats/executions?${range(at, at)}`, { key: "alice-key" });
    const edge = await api.call("GET", `/api/stats/executions?${range(at - 1000, at)}&bucketSeconds=1`, {
      key: "bob-key",
    });

    expect(defaults.status).toBe(200);
    expect(defaults.body.bucketSeconds).toBe(60);
    expect(defaults.body.buckets).toHaveLength(60);
    expect(Date.parse(defaults.body.until) - Date.parse(defaults.body.since)).toBe(3_600_000);
    expect(totals(defaults.body.buckets)).toEqual({ success: 3, error: 1 });
    expect(empty.body.buckets).toEqual([]);
    // `until` is exclusive: bob's last execution, created at `at`, is not in [at - 1 s, at).
    const bobBefore = await api.host.executor.countExecutions({ owner: "bob", since: at - 1000, until: at });
    expect(edge.body.buckets).toEqual([
      {
        start: new Date(at - 1000).toISOString(),
        statuses: bobBefore === 0 ? {} : { error: bobBefore },
      },
    ]);
  });

  it("refuses bad parameters with 400 naming the field", async () => {
    const api = await startApi();
    const now = Date.now();

    const cases = {
      bucketSeconds: await api.call("GET", "/api/stats/executions?bucketSeconds=0"),
      tooManyBuckets: await api.call(
        "GET",
        `/api/stats/executions?${range(now - 1441_000, now)}&bucketSeconds=1`,
      ),
      since: await api.call("GET", "/api/stats/executions?since=soon"),
      until: await api.call("GET", `/api/stats/executions?${range(now, now - 1000)}`),
      skill: await api.call("GET", "/api/stats/executions?skill="),
      unknown: await api.call("GET", "/api/stats/executions?bucket=60"),
    };
    const limit = await api.call(
      "GET",
      `/api/stats/executions?${range(now - 1440_000, now)}&bucketSeconds=1`,
    );

    for (const response of Object.values(cases)) {
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe("REQUEST_INVALID");
    }
    const messages = Object.fromEntries(
      Object.entries(cases).map(([name, response]) => [name, response.body.error.message]),
    );
    expect(messages.bucketSeconds).toMatch(
      /`bucketSeconds` must be a whole number of seconds from 1 to 86400/,
    );
    expect(messages.tooManyBuckets).toMatch(
      /^GET \/api\/stats\/executions query: `bucketSeconds` 1 cuts the range into 1441 buckets, more than 1440/,
    );
    expect(cases.tooManyBuckets.body.error.data.issues[0].path).toEqual(["bucketSeconds"]);
    expect(messages.since).toMatch(/`since` must be a date/);
    expect(messages.until).toMatch(/`until` .* must not be before `since`/);
    expect(messages.skill).toMatch(/`skill` must not be empty/);
    expect(messages.unknown).toMatch(/unknown field `bucket`/);
    expect(limit.status).toBe(200);
    expect(limit.body.buckets).toHaveLength(1440);
  });
});

describe("createHttpApp: GET /api/stats/durations", () => {
  it("gives each skill name's histogram over the caller's own finished executions", async () => {
    const api = await apiWithExecutions();

    const alice = await api.call("GET", "/api/stats/durations", { key: "alice-key" });
    const bob = await api.call("GET", "/api/stats/durations?skill=echo&window=2", { key: "bob-key" });
    const future = new Date(Date.now() + 60_000).toISOString();
    const later = await api.call("GET", `/api/stats/durations?since=${encodeURIComponent(future)}`, {
      key: "alice-key",
    });
    const nobody = await api.call("GET", "/api/stats/durations?skill=missing", { key: "alice-key" });

    expect(alice.status).toBe(200);
    expect(alice.body.boundsMs).toEqual([
      1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 30000, 60000,
    ]);
    expect(alice.body.window).toEqual({ executions: 1000, since: null });
    expect(
      alice.body.skills.map((entry: { skillName: string; count: number }) => [entry.skillName, entry.count]),
    ).toEqual([
      ["echo", 3],
      ["other", 1],
    ]);
    const echo = alice.body.skills[0];
    expect(echo.buckets).toHaveLength(16);
    expect(echo.buckets.at(-1)).toEqual({ upToMs: null, count: expect.any(Number) });
    expect(echo.buckets.reduce((total: number, bucket: { count: number }) => total + bucket.count, 0)).toBe(
      3,
    );
    expect(echo.p50DurationMs).toEqual(expect.any(Number));
    expect(echo.p95DurationMs).toBeGreaterThanOrEqual(echo.p50DurationMs);
    expect(bob.body.window.executions).toBe(2);
    expect(bob.body.skills).toEqual([expect.objectContaining({ skillName: "echo", count: 2 })]);
    expect(later.body).toMatchObject({ window: { since: future }, skills: [] });
    expect(nobody.body.skills).toEqual([]);
  });

  it("refuses bad parameters with 400 naming the field", async () => {
    const api = await startApi();

    const window = await api.call("GET", "/api/stats/durations?window=10001");
    const since = await api.call("GET", "/api/stats/durations?since=yesterday");
    const unknown = await api.call("GET", "/api/stats/durations?skills=echo");

    expect([window.status, since.status, unknown.status]).toEqual([400, 400, 400]);
    expect(window.body.error.message).toMatch(
      /`window` must be a whole number of executions from 1 to 10000/,
    );
    expect(since.body.error.message).toMatch(/`since` must be a date/);
    expect(unknown.body.error.message).toMatch(/unknown field `skills`/);
  });
});
