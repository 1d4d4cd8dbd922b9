import { describe, expect, it } from "vitest";
import { registerWorker, useWorkerFixture } from "./worker-fixture.js";

// A thread is told a skill version's module, code hash and identity once; later tasks name it by
// number. These check that every thread that was not told (another thread of the pool, a skill
// registered again) still runs the task, with the context it would have had.

const fixture = useWorkerFixture();
const { newHost, handlerFile } = fixture;

/** Holds its thread until `input.threads` tasks have started, then reports where it ran. */
const HOLDING_HANDLER = [
  'import { appendFileSync, existsSync, readFileSync } from "node:fs";',
  'import { setTimeout as sleep } from "node:timers/promises";',
  'import { threadId } from "node:worker_threads";',
  "const started = (log) => (existsSync(log) ? readFileSync(log, 'utf8').split('\\n').filter(Boolean).length : 0);",
  "export default async function hold(input, ctx) {",
  '  appendFileSync(input.log, threadId + "\\n");',
  "  while (started(input.log) < input.threads) await sleep(5);",
  "  return { threadId, executionId: ctx.executionId, skill: ctx.skill, attempt: ctx.attempt };",
  "}",
];

/** Counts its runs in module state, so a module loaded again starts over at 1. */
const COUNTING_HANDLER = [
  'import { threadId } from "node:worker_threads";',
  "let runs = 0;",
  "export default function count() {",
  "  runs++;",
  "  return { threadId, runs };",
  "}",
];

describe("what a worker thread is told about a skill version", () => {
  it("runs the skill on every thread of the pool, each with its own context", async () => {
    const host = newHost({ maxThreads: 2 });
    const skill = registerWorker(host, "hold", handlerFile("hold.mjs", ...HOLDING_HANDLER), {
      timeoutMs: 10_000,
    });
    const log = fixture.tree.path("hold.log");

    const executions = await Promise.all(
      [0, 1].map(() => host.executor.execute("hold", { log, threads: 2 })),
    );

    for (const execution of executions) {
      expect(execution.error).toBeNull();
      expect(execution.output).toMatchObject({
        executionId: execution.id,
        skill: { id: skill.id, name: "hold", version: "1.0.0" },
        attempt: 1,
      });
    }
    const threads = executions.map((execution) => (execution.output as { threadId: number }).threadId);
    expect(new Set(threads).size).toBe(2);
    // Both threads know it now: more rounds on both still run, each once.
    const again = await Promise.all(
      [0, 1, 2, 3].map(() =>
        host.executor.execute("hold", { log: fixture.tree.path("again.log"), threads: 1 }),
      ),
    );
    expect(again.map((execution) => execution.status)).toEqual(["success", "success", "success", "success"]);
    expect(await host.executor.countExecutions({ skill: "hold" })).toBe(6);
  });

  it("runs a skill registered again with the same code on the thread that ran it, keeping its module", async () => {
    const host = newHost({ maxThreads: 1 });
    const file = handlerFile("count.mjs", ...COUNTING_HANDLER);
    registerWorker(host, "count", file);
    const first = await host.executor.execute("count", {});

    host.registry.unregister("count");
    const registeredAgain = registerWorker(host, "count", file, { version: "1.0.0" });
    const second = await host.executor.execute("count", {});

    expect(first.output).toMatchObject({ runs: 1 });
    expect(second.error).toBeNull();
    expect(second.skillId).toBe(registeredAgain.id);
    // The same module on the same thread: the code hash did not change, so it was not loaded again.
    expect(second.output).toEqual({
      threadId: (first.output as { threadId: number }).threadId,
      runs: 2,
    });
  });
});
