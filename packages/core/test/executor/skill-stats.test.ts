import type { SkillboxError } from "@skillbox/core";
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
    { name: "work", version: "2.0.0", handler: "work" },
    { name: "other", version: "1.0.0", handler: "other" },
  ]);
  return host;
}

/** Nearest-rank percentile, as the query computes it. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((sorted.length * p) / 100) - 1]!;
}

describe("SkillExecutor.skillStats", () => {
  it("counts each version's executions by status, its success rate and its p50/p95 durations", async () => {
    const host = newHost();
    for (let index = 0; index < 17; index++) {
      await host.executor.execute("work@1.0.0", { fail: index % 4 === 0 });
    }
    await host.executor.execute("work@2.0.0", {});

    const { window, skills } = await host.executor.skillStats();

    expect(window).toEqual({ executions: 1000, since: null });
    const durations = (await host.executor.listExecutions({ skill: "work", limit: 1000 }))
      .filter((execution) => execution.skillVersion === "1.0.0")
      .map((execution) => execution.duration as number);
    expect(durations).toHaveLength(17);
    const version1 = skills.find((entry) => entry.skillVersion === "1.0.0");
    expect(version1).toMatchObject({
      skillName: "work",
      executions: 17,
      finished: 17,
      statuses: { success: 12, error: 5 },
      successRate: 12 / 17,
      p50DurationMs: percentile(durations, 50),
      p95DurationMs: percentile(durations, 95),
    });
    expect(skills.find((entry) => entry.skillVersion === "2.0.0")).toMatchObject({
      executions: 1,
      successRate: 1,
    });
    // A skill nobody ran has no entry.
    expect(skills.map((entry) => entry.skillName)).toEqual(["work", "work"]);
    expect(version1!.skillId).toBe(
      host.registry.getSkillVersions("work", "public").find((skill) => skill.version === "1.0.0")?.id,
    );
  });

  it("never counts another owner's executions", async () => {
    const host = newHost();
    await host.executor.execute("work@1.0.0", {}, { apiKeyId: "alice" });
    for (let index = 0; index < 3; index++) {
      await host.executor.execute("work@1.0.0", { fail: true }, { apiKeyId: "bob" });
    }

    const alice = (await host.executor.skillStats({ owner: "alice" })).skills;
    const bob = (await host.executor.skillStats({ owner: "bob" })).skills;
    const nobody = (await host.executor.skillStats()).skills;

    expect(alice).toHaveLength(1);
    expect(alice[0]).toMatchObject({ executions: 1, statuses: { success: 1 }, successRate: 1 });
    expect(bob[0]).toMatchObject({ executions: 3, statuses: { error: 3 }, successRate: 0 });
    expect(nobody).toEqual([]);
  });

  it("looks at the most recent `window` executions of each name, and only those since `since`", async () => {
    const host = newHost();
    for (let index = 0; index < 5; index++) await host.executor.execute("work@1.0.0", { fail: true });
    const between = new Date();
    for (let index = 0; index < 2; index++) await host.executor.execute("work@1.0.0", {});
    await host.executor.execute("other", {});

    const lastThree = await host.executor.skillStats({ window: 3 });
    expect(lastThree.window.executions).toBe(3);
    expect(lastThree.skills.find((entry) => entry.skillName === "work")).toMatchObject({
      executions: 3,
      statuses: { success: 2, error: 1 },
    });
    expect(lastThree.skills.find((entry) => entry.skillName === "other")?.executions).toBe(1);

    const onlyWork = await host.executor.skillStats({ skills: ["work"] });
    expect(onlyWork.skills.map((entry) => entry.skillName)).toEqual(["work"]);
    expect(onlyWork.skills[0]!.executions).toBe(7);

    // Rows created in the same millisecond as `between` count: the bound is inclusive.
    const recent = await host.executor.skillStats({ skills: ["work"], since: between });
    expect(recent.window.since).toBe(between.toISOString());
    expect(recent.skills[0]!.executions).toBeGreaterThanOrEqual(2);
    expect(recent.skills[0]!.executions).toBeLessThan(7);
    expect((await host.executor.skillStats({ since: Date.now() + 60_000 })).skills).toEqual([]);
  });

  it("shows an execution still under way in the window, outside the success rate", async () => {
    const host = newHost();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let markStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      markStarted = resolve;
    });
    host.executor.registerHandler("slow", async (input: { hold?: boolean }) => {
      if (input.hold === true) {
        markStarted();
        await gate;
      }
      return {};
    });
    host.registry.register({ name: "slow", version: "1.0.0", handler: "slow" });
    await host.executor.execute("slow", {});
    const running = host.executor.execute("slow", { hold: true });
    await started;
    // The running row is committed by the time the handler runs.
    const during = (await host.executor.skillStats({ skills: ["slow"] })).skills[0];
    release();
    await running;

    expect(during).toMatchObject({ executions: 2, finished: 1, statuses: { success: 1, running: 1 } });
    expect(during!.successRate).toBe(1);
  });

  it("reads fewer executions per name when there are so many names that one query would read too many", async () => {
    const host = newHost();
    const names = Array.from({ length: 401 }, (_, index) => `name-${index}`);

    expect((await host.executor.skillStats({ skills: names })).window.executions).toBe(
      Math.floor(200_000 / 401),
    );
    expect((await host.executor.skillStats({ skills: names.slice(0, 10) })).window.executions).toBe(1000);
  });

  it("refuses a window out of range, naming the field", async () => {
    const host = newHost();
    for (const window of [0, 10_001, 1.5]) {
      let error: SkillboxError | undefined;
      try {
        await host.executor.skillStats({ window });
      } catch (thrown) {
        error = thrown as SkillboxError;
      }
      expect(error?.code).toBe("INPUT_INVALID");
      expect(error?.message).toContain("`window`");
    }
    await expect(host.executor.skillStats({ since: "yesterday-ish" })).rejects.toThrow(
      /`since` must be a date/,
    );
  });
});
