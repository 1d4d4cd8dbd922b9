import { DURATION_HISTOGRAM_BOUNDS_MS } from "@skillbox/core";
import { createExecutionId } from "@skillbox/core/internal";
import { expect, it } from "vitest";
import { claimOf, insert, type OpenRecordStore, OTHER_OWNER, OWNER, withStore } from "./fixture.js";
import {
  ECHO_1,
  ECHO_2,
  expectedBuckets,
  inOrder,
  REVERSE,
  Seeder,
  seedMix,
  success,
  total,
} from "./stats-seed.js";

/** skillStats, executionTimeline and durationHistogram: the audit trail's statistics over the shared record. */
export function statsCases(open: OpenRecordStore): void {
  it("skillStats() counts each version's statuses, success rate and nearest-rank p50/p95 of the owner's executions only", async () => {
    await withStore(open, async ({ store }) => {
      const { seeded } = await seedMix(store);
      const mine = (skillId: string) =>
        seeded.filter((entry) => entry.apiKeyId === OWNER && entry.skillId === skillId);
      const result = await store.skillStats(OWNER, ["echo", "reverse", "missing"]);
      expect(result).toEqual({
        window: { executions: 1000, since: null },
        skills: [
          {
            ...ECHO_1,
            executions: 10,
            finished: 8,
            statuses: { queued: 1, running: 1, success: 6, error: 1, cancelled: 1 },
            successRate: 0.75,
            // Durations 0.5 2 10 20 30 40 1000 (the cancellation has none): ranks 4 and 7.
            p50DurationMs: 20,
            p95DurationMs: 1000,
            lastExecutionAt: Seeder.newest(mine(ECHO_1.skillId)),
          },
          {
            ...ECHO_2,
            executions: 1,
            finished: 1,
            statuses: { success: 1 },
            successRate: 1,
            p50DurationMs: 5000,
            p95DurationMs: 5000,
            lastExecutionAt: Seeder.newest(mine(ECHO_2.skillId)),
          },
          {
            ...REVERSE,
            executions: 2,
            finished: 2,
            statuses: { success: 2 },
            successRate: 1,
            p50DurationMs: 60_000,
            p95DurationMs: 60_001,
            lastExecutionAt: Seeder.newest(mine(REVERSE.skillId)),
          },
        ],
      });
      const other = await store.skillStats(OTHER_OWNER, ["echo", "reverse"]);
      expect(other.skills).toEqual([
        expect.objectContaining({
          ...ECHO_1,
          executions: 2,
          finished: 2,
          p50DurationMs: 7,
          p95DurationMs: 7,
        }),
      ]);
      expect(await store.skillStats("nobody", ["echo"])).toEqual({
        window: { executions: 1000, since: null },
        skills: [],
      });
      expect((await store.skillStats(OWNER, [])).skills).toEqual([]);
    });
  });

  it("skillStats() counts one version run under another host's registry id as the same version", async () => {
    await withStore(open, async ({ store }) => {
      const seeder = new Seeder(store);
      // Each host's registry gives echo 1.0.0 an id of its own.
      await seeder.add({ ...ECHO_1, skillId: "skill-echo-1-on-host-b" }, success(3));
      await seeder.add(ECHO_1, success(1));
      await seeder.add({ ...ECHO_1, skillId: "skill-echo-1-on-host-b" }, { status: "error", durationMs: 2 });
      await seeder.add(ECHO_2, success(9));
      const result = await store.skillStats(OWNER, ["echo"]);
      expect(result.skills).toEqual([
        {
          ...ECHO_1,
          executions: 3,
          finished: 3,
          statuses: { success: 2, error: 1 },
          successRate: 2 / 3,
          p50DurationMs: 2,
          p95DurationMs: 3,
          lastExecutionAt: new Date(seeder.seeded[2]?.createdAt ?? 0).toISOString(),
        },
        expect.objectContaining({ ...ECHO_2, executions: 1, p50DurationMs: 9 }),
      ]);
    });
  });

  it("skillStats() and durationHistogram() read each name's newest `window` executions, then those since `since`", async () => {
    await withStore(open, async ({ store }) => {
      const seeder = new Seeder(store);
      for (const durationMs of [1, 2, 3, 4, 5]) await seeder.add(ECHO_1, success(durationMs));
      await seeder.add({ ...ECHO_1, apiKeyId: OTHER_OWNER }, success(100));
      const [, , third] = seeder.seeded;
      const windowed = await store.skillStats(OWNER, ["echo"], { window: 2 });
      expect(windowed.window).toEqual({ executions: 2, since: null });
      expect(windowed.skills).toEqual([
        expect.objectContaining({ executions: 2, p50DurationMs: 4, p95DurationMs: 5 }),
      ]);
      const since = new Date(third?.createdAt ?? 0).toISOString();
      const recent = await store.skillStats(OWNER, ["echo"], { since });
      expect(recent.window).toEqual({ executions: 1000, since });
      // [since …: 3 4 5 counted, rank 2 and 3.
      expect(recent.skills).toEqual([
        expect.objectContaining({ executions: 3, finished: 3, p50DurationMs: 4, p95DurationMs: 5 }),
      ]);
      // The window is taken first: of the newest 4 (2 3 4 5), those since the third (3 4 5).
      const both = await store.durationHistogram(OWNER, ["echo"], { window: 4, since });
      expect(
        both.skills.map(({ count, p50DurationMs, p95DurationMs }) => ({
          count,
          p50DurationMs,
          p95DurationMs,
        })),
      ).toEqual([{ count: 3, p50DurationMs: 4, p95DurationMs: 5 }]);
      const narrow = await store.durationHistogram(OWNER, ["echo"], { window: 2, since });
      expect(narrow.skills[0]?.count).toBe(2);
      await expect(store.skillStats(OWNER, ["echo"], { window: 0 })).rejects.toMatchObject({
        code: "INPUT_INVALID",
      });
      await expect(store.durationHistogram(OWNER, ["echo"], { since: "not a date" })).rejects.toMatchObject({
        code: "INPUT_INVALID",
      });
    });
  });

  it("durationHistogram() counts the owner's finished durations per name in every fixed bucket, bounds inclusive", async () => {
    await withStore(open, async ({ store }) => {
      await seedMix(store);
      const result = await store.durationHistogram(OWNER, ["echo", "reverse", "missing"]);
      const bounds = [...DURATION_HISTOGRAM_BOUNDS_MS, null];
      const buckets = (counts: number[]) =>
        bounds.map((upToMs, index) => ({ upToMs, count: counts[index] ?? 0 }));
      expect(result).toEqual({
        boundsMs: [...DURATION_HISTOGRAM_BOUNDS_MS],
        window: { executions: 1000, since: null },
        skills: [
          {
            skillName: "echo",
            // Both versions: 0.5 2 10 20 30 40 1000 5000 (another owner's 7s are not here).
            count: 8,
            p50DurationMs: 20,
            p95DurationMs: 5000,
            buckets: buckets([1, 1, 0, 1, 1, 2, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0]),
          },
          {
            skillName: "reverse",
            count: 2,
            p50DurationMs: 60_000,
            p95DurationMs: 60_001,
            buckets: buckets([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]),
          },
        ],
      });
      const other = await store.durationHistogram(OTHER_OWNER, ["echo"]);
      expect(other.skills).toEqual([
        expect.objectContaining({ skillName: "echo", count: 2, buckets: buckets([0, 0, 0, 2]) }),
      ]);
      expect((await store.durationHistogram(OWNER, [])).skills).toEqual([]);
    });
  });

  it("executionTimeline() counts the owner's executions per bucket of created_at over [since, until), every bucket present", async () => {
    await withStore(open, async ({ store }) => {
      const { seeded } = await seedMix(store);
      const first = seeded[0]?.createdAt ?? 0;
      const last = seeded.at(-1)?.createdAt ?? 0;
      // Bounds on rows: the first counts (inclusive), the last does not (exclusive).
      const range = { owner: OWNER, since: first, until: last, bucketMs: 1000 };
      const timeline = await store.executionTimeline(OWNER, { since: first, until: last, bucketSeconds: 1 });
      expect(timeline.bucketSeconds).toBe(1);
      expect(timeline.since).toBe(new Date(first).toISOString());
      expect(timeline.until).toBe(new Date(last).toISOString());
      // Entries, so the order of statuses counts too.
      expect(timeline.buckets.map(({ start, statuses }) => [start, Object.entries(statuses)])).toEqual(
        expectedBuckets(seeded, range).map((statuses, index) => [
          new Date(first + index * 1000).toISOString(),
          Object.entries(inOrder(statuses)),
        ]),
      );
      // 13 of the owner's in the mix, the last one (queued) outside: 12.
      expect(total(timeline.buckets)).toBe(12);
      const hour = { since: first, until: last + 1, bucketSeconds: 3600 };
      const whole = await store.executionTimeline(OWNER, hour);
      expect(whole.buckets).toHaveLength(1);
      expect(Object.entries(whole.buckets[0]?.statuses ?? {})).toEqual([
        ["queued", 1],
        ["running", 1],
        ["success", 9],
        ["error", 1],
        ["cancelled", 1],
      ]);
      const reverse = await store.executionTimeline(OWNER, { ...hour, skill: "reverse" });
      expect(reverse.buckets[0]?.statuses).toEqual({ success: 2 });
      const other = await store.executionTimeline(OTHER_OWNER, hour);
      expect(other.buckets[0]?.statuses).toEqual({ success: 2 });
      const empty = await store.executionTimeline(OWNER, { since: last + 1, until: last + 1 });
      expect(empty.buckets).toEqual([]);
      const before = await store.executionTimeline(OWNER, {
        since: first - 120_000,
        until: first,
        bucketSeconds: 60,
      });
      expect(before.buckets).toEqual([
        { start: new Date(first - 120_000).toISOString(), statuses: {} },
        { start: new Date(first - 60_000).toISOString(), statuses: {} },
      ]);
    });
  });

  it("the statistics' time bounds compare created_at (the database's clock), whatever time the id carries", async () => {
    await withStore(open, async ({ store }) => {
      // A host whose clock is a minute behind the database's mints ids a minute "older".
      const record = await insert(store, { id: createExecutionId(Date.now() - 60_000) });
      await store.finish(await claimOf(store, record.id), {
        status: "success",
        outputJson: null,
        error: null,
        attempts: 1,
        durationMs: 3,
        traceId: null,
        spanId: null,
      });
      const createdAt = Date.parse((await store.get(record.id))?.createdAt ?? "");
      const timeline = await store.executionTimeline(OWNER, {
        since: createdAt,
        until: createdAt + 1,
        bucketSeconds: 1,
      });
      expect(timeline.buckets.map((bucket) => bucket.statuses)).toEqual([{ success: 1 }]);
      expect(
        (await store.executionTimeline(OWNER, { since: createdAt + 1, until: createdAt + 2 })).buckets,
      ).toEqual([{ start: new Date(createdAt + 1).toISOString(), statuses: {} }]);
      expect((await store.skillStats(OWNER, ["echo"], { since: createdAt })).skills).toHaveLength(1);
      expect((await store.skillStats(OWNER, ["echo"], { since: createdAt + 1 })).skills).toEqual([]);
      expect((await store.durationHistogram(OWNER, ["echo"], { since: createdAt })).skills[0]?.count).toBe(1);
    });
  });

  it("executionTimeline() defaults to the hour before the database's now in 60 s buckets and refuses bad ranges", async () => {
    await withStore(open, async ({ store }) => {
      const { seeded } = await seedMix(store);
      const before = await store.now();
      const timeline = await store.executionTimeline(OWNER);
      const after = await store.now();
      const until = Date.parse(timeline.until);
      expect(until).toBeGreaterThanOrEqual(before);
      expect(until).toBeLessThanOrEqual(after);
      expect(Date.parse(timeline.since)).toBe(until - 3_600_000);
      expect(timeline.buckets).toHaveLength(60);
      // Made in the same ms as `until`, the newest is outside [since, until), as in the audit trail.
      const inRange = seeded.filter((entry) => entry.apiKeyId === OWNER && entry.createdAt < until);
      expect(inRange.length).toBeGreaterThanOrEqual(12);
      expect(total(timeline.buckets)).toBe(inRange.length);
      await expect(store.executionTimeline(OWNER, { bucketSeconds: 0 })).rejects.toMatchObject({
        code: "INPUT_INVALID",
      });
      await expect(store.executionTimeline(OWNER, { since: after, until: after - 1 })).rejects.toMatchObject({
        code: "INPUT_INVALID",
      });
      await expect(
        store.executionTimeline(OWNER, { since: after - 86_400_000, until: after, bucketSeconds: 1 }),
      ).rejects.toMatchObject({ code: "INPUT_INVALID", message: expect.stringContaining("1440") });
    });
  });
}
