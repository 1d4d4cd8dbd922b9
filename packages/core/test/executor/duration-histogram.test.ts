import { DURATION_HISTOGRAM_BOUNDS_MS, type SkillboxError } from "@skillbox/core";
import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { describe, expect, it } from "vitest";
import { useTemporaryHosts } from "./executor-test-bed.js";

const newTemporaryHost = useTemporaryHosts();

/** `work` (two versions) and `other`, public, succeeding unless asked to fail. */
function newHost(): TemporaryHost {
  const host = newTemporaryHost();
  host.executor.registerHandler("work", (input: { fail?: boolean }) => {
    if (input.fail === true) throw new Error("asked to fail");
    return { ok: true };
  });
  host.executor.registerHandler("other", () => ({}));
  host.registry.registerMany([
    { name: "work", version: "1.0.0", handler: "work" },
    { name: "work", version: "2.0.0", handler: "work" },
    { name: "other", version: "1.0.0", handler: "other" },
  ]);
  return host;
}

/**
 * Gives the recorded executions of `skill` by `owner` these durations, oldest first: measured
 * durations are whatever the machine took, and the bucket edges need exact ones.
 */
async function setDurations(
  host: TemporaryHost,
  skill: string,
  owner: string,
  durations: number[],
): Promise<void> {
  const ids = (await host.executor.listExecutions({ skill, owner, limit: 1000 }))
    .map((execution) => execution.id)
    .reverse();
  expect(ids).toHaveLength(durations.length);
  const update = host.database.prepare("UPDATE skill_executions SET duration_ms = ? WHERE id = ?");
  for (const [index, id] of ids.entries()) update.run(durations[index], id);
}

/** The counts of a skill's buckets, keyed by upper bound (`null`: the last). */
function countsOf(buckets: Array<{ upToMs: number | null; count: number }>): Record<string, number> {
  return Object.fromEntries(
    buckets.filter((bucket) => bucket.count > 0).map((bucket) => [String(bucket.upToMs), bucket.count]),
  );
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

describe("SkillExecutor.durationHistogram", () => {
  it("counts each name's finished durations in (previous bound, bound], with nearest-rank p50/p95", async () => {
    const host = newHost();
    const durations = [0, 1, 1.5, 2, 2.0001, 999, 1000, 60_000, 60_000.5, 120_000];
    for (let index = 0; index < durations.length; index++) {
      // Both versions of a name go in one histogram.
      await host.executor.execute(index % 2 === 0 ? "work@1.0.0" : "work@2.0.0", { fail: index === 3 });
    }
    await setDurations(host, "work", "public", durations);

    const { boundsMs, window, skills } = await host.executor.durationHistogram();

    expect(boundsMs).toEqual([...DURATION_HISTOGRAM_BOUNDS_MS]);
    expect(window).toEqual({ executions: 1000, since: null });
    // `other` never ran: no entry.
    expect(skills.map((entry) => entry.skillName)).toEqual(["work"]);
    const [work] = skills;
    expect(work?.count).toBe(10);
    expect(work?.buckets.map((bucket) => bucket.upToMs)).toEqual([...DURATION_HISTOGRAM_BOUNDS_MS, null]);
    expect(countsOf(work?.buckets ?? [])).toEqual({
      "1": 2,
      "2": 2,
      "5": 1,
      "1000": 2,
      "60000": 1,
      null: 2,
    });
    // Sorted: 0, 1, 1.5, 2, 2.0001, 999, 1000, 60000, 60000.5, 120000 — ranks ceil(5) and ceil(9.5).
    expect(work?.p50DurationMs).toBe(2.0001);
    expect(work?.p95DurationMs).toBe(120_000);
  });

  it("never counts another owner's executions, and looks at each name's last `window` since `since`", async () => {
    const host = newHost();
    for (let index = 0; index < 3; index++) await host.executor.execute("other", {}, { apiKeyId: "alice" });
    await host.executor.execute("other", {}, { apiKeyId: "bob" });
    await setDurations(host, "other", "alice", [3, 30, 300]);
    await setDurations(host, "other", "bob", [3000]);

    const alice = await host.executor.durationHistogram({ owner: "alice" });
    const lastTwo = await host.executor.durationHistogram({ owner: "alice", window: 2 });
    const bob = await host.executor.durationHistogram({ owner: "bob", skills: ["other"] });
    const future = new Date(Date.now() + 60_000);
    const none = await host.executor.durationHistogram({ owner: "alice", since: future });
    const noNames = await host.executor.durationHistogram({ owner: "alice", skills: [] });

    expect(countsOf(alice.skills[0]?.buckets ?? [])).toEqual({ "5": 1, "50": 1, "500": 1 });
    expect(lastTwo.window.executions).toBe(2);
    expect(countsOf(lastTwo.skills[0]?.buckets ?? [])).toEqual({ "50": 1, "500": 1 });
    expect(countsOf(bob.skills[0]?.buckets ?? [])).toEqual({ "5000": 1 });
    expect(none).toMatchObject({ window: { since: future.toISOString() }, skills: [] });
    expect(noNames.skills).toEqual([]);
  });

  it("refuses a bad window or date, naming the option", async () => {
    const host = newHost();
    expect((await rejection(host.executor.durationHistogram({ window: 0 }))).message).toMatch(
      /durationHistogram: `window` must be a whole number of executions from 1 to 10000, got 0/,
    );
    expect((await rejection(host.executor.durationHistogram({ window: 10_001 }))).code).toBe("INPUT_INVALID");
    expect((await rejection(host.executor.durationHistogram({ since: "soon" }))).message).toMatch(
      /durationHistogram: `since` must be a date/,
    );
  });
});
