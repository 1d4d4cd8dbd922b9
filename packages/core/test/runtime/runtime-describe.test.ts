import { existsSync } from "node:fs";
import type { RuntimeDescription, SkillRuntime } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { registerWorker, useWorkerFixture, waitFor } from "./worker-fixture.js";

const fixture = useWorkerFixture();
const { newHost, handlerFile } = fixture;

/** Writes `input.started`, then waits until `input.release` exists. */
const HOLD = [
  'import { existsSync, writeFileSync } from "node:fs";',
  'import { setTimeout as sleep } from "node:timers/promises";',
  "export default async function hold(input) {",
  '  writeFileSync(input.started, "");',
  "  while (!existsSync(input.release)) await sleep(5);",
  "  return {};",
  "}",
];

/**
 * A runtime of the kind a package adds, keeping a pool per skill version: it runs handlers on
 * the caller's thread and counts, per skill, the executions it has run.
 */
function countingRuntime(): SkillRuntime {
  const runs = new Map<string, { label: string; count: number }>();
  return {
    name: "counting",
    async run(request) {
      const entry = runs.get(request.skill.id) ?? {
        label: `${request.skill.name}@${request.skill.version}`,
        count: 0,
      };
      entry.count++;
      runs.set(request.skill.id, entry);
      const handler = await request.resolveHandler();
      return handler(request.input, request.context);
    },
    describe(): RuntimeDescription {
      return {
        details: { kind: "test" },
        pools: [...runs].map(([skillId, entry]) => ({
          name: entry.label,
          skillId,
          size: entry.count,
          idle: entry.count,
          busy: 0,
          max: null,
        })),
      };
    },
  };
}

describe("SkillExecutor.describeRuntimes", () => {
  it("describes the inline runtime and the worker runtime's thread pool, busy while a task runs", async () => {
    const host = newHost({ maxThreads: 2 });
    const file = handlerFile("hold.mjs", ...HOLD);
    registerWorker(host, "hold", file);
    const started = fixture.tree.path("started");
    const release = fixture.tree.path("release");

    const before = host.executor.describeRuntimes();
    const running = host.executor.execute("hold", { started, release });
    await waitFor(() => existsSync(started), "the handler to start");
    const during = host.executor.describeRuntimes();
    fixture.tree.write("release", "");
    expect((await running).status).toBe("success");
    const after = host.executor.describeRuntimes();

    expect(before).toEqual([
      { name: "inline", details: { isolation: "none" }, pools: [] },
      {
        name: "worker",
        details: {
          isolation: "worker thread",
          maxThreads: 2,
          minThreads: 0,
          idleTimeoutMs: 30_000,
          maxQueue: 1000,
          maxConcurrencyPerSkill: null,
          threads: 0,
          queued: 0,
        },
        pools: [],
      },
    ]);
    const worker = (described: typeof before) => described.find((runtime) => runtime.name === "worker");
    expect(worker(during)?.pools).toEqual([{ name: "threads", size: 1, idle: 0, busy: 1, max: 2 }]);
    expect(worker(during)?.details.threads).toBe(1);
    expect(worker(after)?.pools).toEqual([{ name: "threads", size: 1, idle: 1, busy: 0, max: 2 }]);
  });

  it("lists a pool of a skill version only to owners who can see that skill", async () => {
    const host = newHost({}, { runtimes: [countingRuntime()] });
    host.executor.registerHandler("noop", () => ({}));
    host.registry.registerMany([
      { name: "shared", version: "1.0.0", handler: "noop", runtime: "counting", apiKeyId: "public" },
      { name: "private", version: "1.0.0", handler: "noop", runtime: "counting", apiKeyId: "alice" },
    ]);
    await host.executor.execute("shared", {}, { apiKeyId: "bob" });
    await host.executor.execute("private", {}, { apiKeyId: "alice" });

    const poolsOf = (owner?: string) =>
      host.executor
        .describeRuntimes(owner === undefined ? {} : { owner })
        .find((runtime) => runtime.name === "counting")
        ?.pools.map((pool) => pool.name);

    expect(poolsOf("alice")).toEqual(["shared@1.0.0", "private@1.0.0"]);
    expect(poolsOf("bob")).toEqual(["shared@1.0.0"]);
    expect(poolsOf()).toEqual(["shared@1.0.0", "private@1.0.0"]);
    // A skill removed from the registry takes its pool out of every view.
    host.registry.unregister("private", "1.0.0", "alice");
    expect(poolsOf("alice")).toEqual(["shared@1.0.0"]);
  });

  it("describes a runtime without describe() as empty, and survives one whose describe() throws", () => {
    const warnings: string[] = [];
    const host = newHost(
      {},
      {
        logger: { debug() {}, info() {}, warn: (message) => warnings.push(message), error() {} },
        runtimes: [
          { name: "plain", run: async () => ({}) },
          {
            name: "broken",
            run: async () => ({}),
            describe() {
              throw new Error("cannot tell");
            },
          },
        ],
      },
    );

    const described = host.executor.describeRuntimes();

    expect(described.map((runtime) => runtime.name)).toEqual(["inline", "worker", "plain", "broken"]);
    expect(described.slice(2).map(({ details, pools }) => ({ details, pools }))).toEqual([
      { details: {}, pools: [] },
      { details: {}, pools: [] },
    ]);
    expect(warnings).toEqual(["a runtime failed to describe itself"]);
  });
});
