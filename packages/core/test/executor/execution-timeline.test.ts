import { MAX_TIMELINE_BUCKETS, type SkillboxError } from "@skillbox/core";
import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { describe, expect, it } from "vitest";
import { useTemporaryHosts } from "./executor-test-bed.js";

const newTemporaryHost = useTemporaryHosts();

/** `work` succeeds unless its input says `fail`; `other` always succeeds. Both are public. */
function newHost(): TemporaryHost {
  const host = newTemporaryHost();
  host.executor.registerHandler("work", (input: { fail?: boolean }) => {
    if (input.fail === true) throw new Error("asked to fail");
    return { ok: true };
  });
  host.executor.registerHandler("other", () => ({}));
  host.registry.registerMany([
    { name: "work", version: "1.0.0", handler: "work" },
    { name: "other", version: "1.0.0", handler: "other" },
  ]);
  return host;
}

/** When the newest execution was created, in epoch ms. */
async function newestCreatedAt(host: TemporaryHost): Promise<number> {
  const [newest] = await host.executor.listExecutions({ limit: 1 });
  if (newest === undefined) throw new Error("no execution was recorded");
  return Date.parse(newest.createdAt);
}

/** What the timeline should count, worked out from the recorded executions one by one. */
async function expectedStatuses(
  host: TemporaryHost,
  options: { owner: string; since: number; until: number; bucketMs: number; skill?: string },
): Promise<Array<Record<string, number>>> {
  const { owner, since, until, bucketMs, skill } = options;
  const buckets: Array<Record<string, number>> = Array.from(
    { length: Math.ceil((until - since) / bucketMs) },
    () => ({}),
  );
  for (const execution of await host.executor.listExecutions({ owner, skill, limit: 1000 })) {
    const at = Date.parse(execution.createdAt);
    if (at < since || at >= until) continue;
    const bucket = buckets[Math.floor((at - since) / bucketMs)] ?? {};
    bucket[execution.status] = (bucket[execution.status] ?? 0) + 1;
  }
  return buckets;
}

/** Every bucket's counts added up by status. */
function totals(timeline: { buckets: Array<{ statuses: Record<string, number | undefined> }> }) {
  const sums: Record<string, number> = {};
  for (const { statuses } of timeline.buckets) {
    for (const [status, count] of Object.entries(statuses)) sums[status] = (sums[status] ?? 0) + (count ?? 0);
  }
  return sums;
}

/** The error `pending` rejects with; it must reject. */
async function rejection(pending: Promise<unknown>): Promise<SkillboxError> {
  try {
    await pending;
  } catch (error) {
    return error as SkillboxError;
  }
  throw new Error("expected a rejection");
}

describe("SkillExecutor.executionTimeline", () => {
  it("counts the owner's executions per bucket by status, every bucket present, oldest first", async () => {
    const host = newHost();
    const first = Date.now();
    for (const fail of [false, true, false]) {
      await host.executor.execute("work", { fail }, { apiKeyId: "alice" });
    }
    await host.executor.execute("other", {}, { apiKeyId: "alice" });
    // Another owner's executions, in the same buckets, never count.
    for (let index = 0; index < 4; index++) {
      await host.executor.execute("work", { fail: true }, { apiKeyId: "bob" });
    }
    const until = (await newestCreatedAt(host)) + 1;
    // Four minutes before anything ran: the first buckets are empty whatever the machine's pace.
    const since = first - 4 * 60_000;
    const bucketMs = 60_000;
    const count = Math.ceil((until - since) / bucketMs);

    const timeline = await host.executor.executionTimeline({
      owner: "alice",
      since,
      until,
      bucketSeconds: 60,
    });
    const onlyWork = await host.executor.executionTimeline({
      owner: "alice",
      since,
      until,
      bucketSeconds: 60,
      skill: "work",
    });
    const bob = await host.executor.executionTimeline({ owner: "bob", since, until });
    const carol = await host.executor.executionTimeline({ owner: "carol", since, until });

    expect(timeline.bucketSeconds).toBe(60);
    expect(timeline.since).toBe(new Date(since).toISOString());
    expect(timeline.until).toBe(new Date(until).toISOString());
    expect(timeline.buckets.map((bucket) => bucket.start)).toEqual(
      Array.from({ length: count }, (_, index) => new Date(since + index * bucketMs).toISOString()),
    );
    const statusesOf = (answer: typeof timeline) => answer.buckets.map((bucket) => bucket.statuses);
    expect(statusesOf(timeline)).toEqual(
      await expectedStatuses(host, { owner: "alice", since, until, bucketMs }),
    );
    expect(statusesOf(timeline).slice(0, 4)).toEqual([{}, {}, {}, {}]);
    expect(totals(timeline)).toEqual({ success: 3, error: 1 });
    expect(statusesOf(onlyWork)).toEqual(
      await expectedStatuses(host, { owner: "alice", since, until, bucketMs, skill: "work" }),
    );
    expect(totals(onlyWork)).toEqual({ success: 2, error: 1 });
    expect(totals(bob)).toEqual({ error: 4 });
    expect(carol.buckets).toHaveLength(count);
    expect(totals(carol)).toEqual({});
  });

  it("lists a bucket's statuses in the documented order, whatever order they happened in", async () => {
    const host = newHost();
    const since = Date.now();
    await host.executor.execute("work", { fail: true });
    await host.executor.execute("work", {});
    const until = (await newestCreatedAt(host)) + 1;

    // One bucket holds the whole range.
    const [bucket] = (await host.executor.executionTimeline({ since, until, bucketSeconds: 86_400 })).buckets;

    expect(Object.keys(bucket?.statuses ?? {})).toEqual(["success", "error"]);
  });

  it("puts an execution at a bucket's start in that bucket, one at `since` in, and one at `until` out", async () => {
    const host = newHost();
    await host.executor.execute("other", {});
    const at = await newestCreatedAt(host);

    const startingThere = await host.executor.executionTimeline({
      since: at,
      until: at + 3000,
      bucketSeconds: 1,
    });
    const endingThere = await host.executor.executionTimeline({
      since: at - 3000,
      until: at,
      bucketSeconds: 1,
    });
    const edgeInside = await host.executor.executionTimeline({
      since: at - 1000,
      until: at + 1000,
      bucketSeconds: 1,
    });
    const justBefore = await host.executor.executionTimeline({
      since: at - 1,
      until: at + 1,
      bucketSeconds: 1,
    });

    expect(startingThere.buckets.map((bucket) => bucket.statuses)).toEqual([{ success: 1 }, {}, {}]);
    expect(endingThere.buckets.map((bucket) => bucket.statuses)).toEqual([{}, {}, {}]);
    // [at - 1000, at) and [at, at + 1000): the edge belongs to the later bucket.
    expect(edgeInside.buckets.map((bucket) => bucket.statuses)).toEqual([{}, { success: 1 }]);
    // A range shorter than a bucket is one bucket, starting at `since`.
    expect(justBefore.buckets).toEqual([{ start: new Date(at - 1).toISOString(), statuses: { success: 1 } }]);
  });

  it("answers an empty range with no buckets, and a range without executions with empty ones", async () => {
    const host = newHost();
    await host.executor.execute("other", {});
    const at = await newestCreatedAt(host);

    const empty = await host.executor.executionTimeline({ since: at, until: at });
    const quiet = await host.executor.executionTimeline({
      since: at - 10 * 60_000,
      until: at - 5 * 60_000,
      bucketSeconds: 150,
    });

    expect(empty.buckets).toEqual([]);
    expect(quiet.buckets.map((bucket) => bucket.statuses)).toEqual([{}, {}]);
  });

  it("defaults to the last hour in minutes", async () => {
    const host = newHost();
    await host.executor.execute("other", {});
    const before = Date.now();

    const timeline = await host.executor.executionTimeline();

    const until = Date.parse(timeline.until);
    expect(until).toBeGreaterThanOrEqual(before);
    expect(until - Date.parse(timeline.since)).toBe(60 * 60_000);
    expect(timeline.bucketSeconds).toBe(60);
    expect(timeline.buckets).toHaveLength(60);
    expect(totals(timeline)).toEqual({ success: 1 });
  });

  it("refuses more than 1440 buckets, a bad bucket width, a reversed range and a bad date, naming the option", async () => {
    const host = newHost();
    const until = Date.now();

    const tooMany = await rejection(
      host.executor.executionTimeline({
        since: until - (MAX_TIMELINE_BUCKETS + 1) * 1000,
        until,
        bucketSeconds: 1,
      }),
    );
    const atMost = await host.executor.executionTimeline({
      since: until - MAX_TIMELINE_BUCKETS * 1000,
      until,
      bucketSeconds: 1,
    });

    expect(tooMany.code).toBe("INPUT_INVALID");
    expect(tooMany.message).toMatch(
      /`bucketSeconds` 1 cuts the range into 1441 buckets, more than 1440; use at least 2 seconds/,
    );
    expect(atMost.buckets).toHaveLength(1440);
    expect((await rejection(host.executor.executionTimeline({ bucketSeconds: 0 }))).message).toMatch(
      /`bucketSeconds` must be a whole number of seconds from 1 to 86400, got 0/,
    );
    expect((await rejection(host.executor.executionTimeline({ bucketSeconds: 1.5 }))).code).toBe(
      "INPUT_INVALID",
    );
    expect(
      (await rejection(host.executor.executionTimeline({ since: until, until: until - 1 }))).message,
    ).toMatch(/`until` .* must not be before `since`/);
    expect((await rejection(host.executor.executionTimeline({ since: "soon" }))).message).toMatch(
      /`since` must be a date, got "soon"/,
    );
    expect((await rejection(host.executor.executionTimeline({ skill: "" }))).message).toMatch(
      /`skill` must be a skill name/,
    );
  });
});
