import { existsSync } from "node:fs";
import type { SkillLogger } from "@skillbox/core";
import { createWorkerRuntime } from "@skillbox/core/internal";
import { describe, expect, it } from "vitest";
import { linesOf, registerWorker, THREAD_ID, useWorkerFixture, waitFor } from "./worker-fixture.js";

const fixture = useWorkerFixture();
const { newHost, handlerFile } = fixture;

interface LogEntry {
  level: string;
  message: string;
  fields: Record<string, unknown> | undefined;
}

/** A host logger that keeps what it is told, so a test can read the host log. */
function recordingLogger(): SkillLogger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    entries.push({ level, message, fields });
  };
  return { entries, debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}

/**
 * Returns its thread id at once and fails later, after its task has ended: from a timer (`throw`)
 * or as a rejection nobody handles (`reject`). It writes `input.fired` just before failing.
 */
const LATE_FAILURE = [
  'import { writeFileSync } from "node:fs";',
  'import { threadId } from "node:worker_threads";',
  "export default function lateFailure(input) {",
  "  setTimeout(() => {",
  '    writeFileSync(input.fired, "");',
  '    const error = new Error("late failure of " + input.tenant);',
  '    if (input.how === "reject") Promise.reject(error);',
  "    else throw error;",
  "  }, 50);",
  "  return { threadId };",
  "}",
];

/** Waits until `input.fired` exists (a late failure went off on this thread), then answers. */
const WAITS_FOR_LATE_FAILURE = [
  'import { existsSync } from "node:fs";',
  'import { setTimeout as sleep } from "node:timers/promises";',
  'import { threadId } from "node:worker_threads";',
  "export default async function steady(input) {",
  "  while (!existsSync(input.fired)) await sleep(5);",
  // A turn more, so the late error is delivered while this task still runs.
  "  await sleep(20);",
  '  return { answer: "mine, " + input.tenant, threadId };',
  "}",
];

describe("worker runtime under faults", () => {
  describe("errors after a task ended", () => {
    for (const how of ["throw", "reject"] as const) {
      it(`keeps a late ${how} out of the next task on that thread, logs it on the host and replaces the thread`, async () => {
        const logger = recordingLogger();
        const host = newHost({ maxThreads: 1 }, { logger });
        registerWorker(host, "late-failure", handlerFile("late-failure.mjs", ...LATE_FAILURE), {
          apiKeyId: "tenant-a",
        });
        registerWorker(host, "steady", handlerFile("steady.mjs", ...WAITS_FOR_LATE_FAILURE), {
          apiKeyId: "tenant-b",
        });
        registerWorker(host, "which-thread", handlerFile("which-thread.mjs", ...THREAD_ID));
        const fired = fixture.tree.path("fired");

        const first = await host.executor.execute(
          "late-failure",
          { fired, how, tenant: "tenant-a" },
          { apiKeyId: "tenant-a" },
        );
        expect(first.status).toBe("success");
        const next = await host.executor.execute(
          "steady",
          { fired, tenant: "tenant-b" },
          { apiKeyId: "tenant-b" },
        );

        expect(existsSync(fired)).toBe(true);
        expect(next.error).toBeNull();
        expect(next.status).toBe("success");
        expect(next.output).toEqual({ answer: "mine, tenant-b", threadId: first.output.threadId });
        expect(JSON.stringify(await host.executor.getExecution(next.id))).not.toContain("late failure");
        // The host log has it, with the execution it came from.
        const logged = logger.entries.filter((entry) =>
          JSON.stringify(entry).includes("late failure of tenant-a"),
        );
        expect(logged).toHaveLength(1);
        expect(logged[0]?.level).toBe("error");
        expect(logged[0]?.fields).toMatchObject({ executionId: first.id, skill: "late-failure@1.0.0" });
        // That thread was retired: the next task runs on another one.
        const after = await host.executor.execute("which-thread", {});
        expect(after.status).toBe("success");
        expect(after.output).not.toBe(first.output.threadId);
      });
    }

    it("keeps a late process.exit() out of the next task on that thread", async () => {
      const logger = recordingLogger();
      const host = newHost({ maxThreads: 1 }, { logger });
      const file = handlerFile(
        "late-exit.mjs",
        'import { writeFileSync } from "node:fs";',
        'import { threadId } from "node:worker_threads";',
        "export default function lateExit(input) {",
        "  setTimeout(() => {",
        '    writeFileSync(input.fired, "");',
        "    process.exit(4);",
        "  }, 50);",
        "  return { threadId };",
        "}",
      );
      registerWorker(host, "late-exit", file);
      registerWorker(host, "steady", handlerFile("steady.mjs", ...WAITS_FOR_LATE_FAILURE));
      const fired = fixture.tree.path("fired");

      const first = await host.executor.execute("late-exit", { fired });
      const next = await host.executor.execute("steady", { fired, tenant: "b" });

      expect(next.error).toBeNull();
      expect(next.output).toEqual({ answer: "mine, b", threadId: first.output.threadId });
      const logged = logger.entries.filter((entry) => JSON.stringify(entry).includes("process.exit(4)"));
      expect(logged).toHaveLength(1);
      expect(logged[0]?.fields).toMatchObject({ executionId: first.id, skill: "late-exit@1.0.0" });
    });

    it("runs a task queued behind the one that saw the late error on a fresh thread, exactly once", async () => {
      const host = newHost({ maxThreads: 1 });
      registerWorker(host, "late-failure", handlerFile("late-failure.mjs", ...LATE_FAILURE));
      registerWorker(host, "steady", handlerFile("steady.mjs", ...WAITS_FOR_LATE_FAILURE));
      const queuedLog = fixture.tree.path("queued.log");
      registerWorker(
        host,
        "queued",
        handlerFile(
          "queued.mjs",
          'import { appendFileSync } from "node:fs";',
          'import { threadId } from "node:worker_threads";',
          "export default function queued(input) {",
          '  appendFileSync(input.log, "ran\\n");',
          "  return { threadId };",
          "}",
        ),
      );
      const fired = fixture.tree.path("fired");
      const first = await host.executor.execute("late-failure", { fired, how: "throw", tenant: "a" });

      // The queued task is handed to the thread as soon as `steady` answers, before the runtime
      // retires that thread: the thread refuses it and it runs on the replacement.
      const steady = host.executor.execute("steady", { fired, tenant: "b" });
      await waitFor(
        async () => (await host.executor.countExecutions({ skill: "steady", status: "running" })) === 1,
        "the steady execution to start",
      );
      const queued = host.executor.execute("queued", { log: queuedLog });

      expect((await steady).status).toBe("success");
      const settled = await queued;
      expect(settled.error).toBeNull();
      expect(settled.output.threadId).not.toBe(first.output.threadId);
      expect(linesOf(queuedLog)).toEqual(["ran"]);
    });

    it("fails the running task with its own uncaught error, and replaces the thread", async () => {
      const host = newHost({ maxThreads: 1 });
      const file = handlerFile(
        "own-failure.mjs",
        'import { threadId } from "node:worker_threads";',
        "export default function ownFailure(input) {",
        '  setTimeout(() => { throw new Error("broke while running on " + threadId); }, 10);',
        "  return new Promise(() => {});",
        "}",
      );
      registerWorker(host, "own-failure", file, { timeoutMs: 20_000 });
      registerWorker(host, "which-thread", handlerFile("which-thread.mjs", ...THREAD_ID));
      const before = await host.executor.execute("which-thread", {});

      const failed = await host.executor.execute("own-failure", {});

      expect(failed.status).toBe("error");
      expect(failed.error?.code).toBe("HANDLER_ERROR");
      expect(failed.error?.message).toContain(`broke while running on ${before.output}`);
      const after = await host.executor.execute("which-thread", {});
      expect(after.status).toBe("success");
      expect(after.output).not.toBe(before.output);
    });
  });

  describe("results that do not survive the trip back", () => {
    it("keeps a thrown error whose code, name and retryable are not plain data as the task's own HANDLER_ERROR", async () => {
      const host = newHost({ maxThreads: 1 });
      const file = handlerFile(
        "odd-error.mjs",
        "export default function oddError() {",
        '  throw Object.assign(new Error("odd error of mine"), { code: () => 1, retryable: Symbol("no") });',
        "}",
      );
      registerWorker(host, "odd-error", file, { timeoutMs: 10_000 });

      const failed = await host.executor.execute("odd-error", {});

      expect(failed.status).toBe("error");
      expect(failed.error?.code).toBe("HANDLER_ERROR");
      expect(failed.error?.message).toContain("odd error of mine");
    });

    it("sends the output it checked, so a getter read twice cannot fail the send", async () => {
      const host = newHost({ maxThreads: 1 });
      const file = handlerFile(
        "read-once.mjs",
        "export default function readOnce() {",
        "  let reads = 0;",
        "  return { get value() { reads++; if (reads > 1) throw new Error('read twice'); return 'once'; } };",
        "}",
      );
      registerWorker(host, "read-once", file, { timeoutMs: 10_000 });

      const execution = await host.executor.execute("read-once", {});

      expect(execution.error).toBeNull();
      expect(execution.output).toEqual({ value: "once" });
    });
  });

  describe("a thread that exits", () => {
    it("fails process.exit() at once with WORKER_EXITED and its exit code, without retrying, and replaces the thread", async () => {
      const logger = recordingLogger();
      const host = newHost({ maxThreads: 1 }, { logger });
      const attempts = fixture.tree.path("attempts.log");
      const file = handlerFile(
        "exits.mjs",
        'import { appendFileSync } from "node:fs";',
        "export default function exits(input, ctx) {",
        '  appendFileSync(input.log, ctx.attempt + "\\n");',
        "  process.exit(3);",
        "}",
      );
      // Long enough that a hang would end as TIMEOUT, never as WORKER_EXITED.
      registerWorker(host, "exits", file, {
        timeoutMs: 10_000,
        retry: { maxAttempts: 2, initialDelayMs: 1 },
      });
      registerWorker(host, "which-thread", handlerFile("which-thread.mjs", ...THREAD_ID));
      const before = await host.executor.execute("which-thread", {});

      const exited = await host.executor.execute("exits", { log: attempts });

      expect(exited.status).toBe("error");
      expect(exited.error?.code).toBe("WORKER_EXITED");
      expect(exited.error?.message).toContain("exits@1.0.0");
      expect(exited.error?.message).toContain("exit code 3");
      expect(exited.attempts).toBe(1);
      expect(linesOf(attempts)).toEqual(["1"]);
      const after = await host.executor.execute("which-thread", {});
      expect(after.status).toBe("success");
      expect(after.output).not.toBe(before.output);
    });
  });

  describe("the thread ending itself", () => {
    it("says what exit code 70 means: the worker ending its thread for an error outside any task, or the handler", async () => {
      const host = newHost({ maxThreads: 1 });
      registerWorker(
        host,
        "exits-70",
        handlerFile("exits-70.mjs", "export default () => process.exit(70);"),
        {
          timeoutMs: 10_000,
        },
      );

      const exited = await host.executor.execute("exits-70", {});

      expect(exited.error?.code).toBe("WORKER_EXITED");
      expect(exited.error?.message).toContain("exit code 70");
      expect(exited.error?.message).toContain("could not send the task's result back");
      expect(exited.error?.message).toContain("process.exit(70)");
    });
  });

  describe("ctx.call between worker skills", () => {
    for (const maxThreads of [1, 2]) {
      it(`runs ${maxThreads + 1} concurrent worker parents that each call a worker child on ${maxThreads} thread(s)`, async () => {
        const host = newHost({ maxThreads });
        const log = fixture.tree.path("parents.log");
        registerWorker(
          host,
          "child",
          handlerFile("child.mjs", "export default (input) => ({ doubled: input.n * 2 });"),
        );
        const parent = handlerFile(
          "parent.mjs",
          'import { appendFileSync, readFileSync, existsSync } from "node:fs";',
          'import { setTimeout as sleep } from "node:timers/promises";',
          "const started = (log) => (existsSync(log) ? readFileSync(log, 'utf8').split('\\n').filter(Boolean).length : 0);",
          "export default async function parent(input, ctx) {",
          '  appendFileSync(input.log, "start " + input.n + "\\n");',
          // Every thread is held by a parent before any of them calls: the case that deadlocked.
          "  while (started(input.log) < input.threads) await sleep(5);",
          '  const { doubled } = await ctx.call("child", { n: input.n });',
          "  return { n: input.n, doubled };",
          "}",
        );
        registerWorker(host, "parent", parent, { requires: { child: "^1.0.0" }, timeoutMs: 10_000 });

        const executions = await Promise.all(
          Array.from({ length: maxThreads + 1 }, (_, n) =>
            host.executor.execute("parent", { n, log, threads: maxThreads }),
          ),
        );

        for (const [n, execution] of executions.entries()) {
          expect(execution.error).toBeNull();
          expect(execution.output).toEqual({ n, doubled: n * 2 });
        }
        expect(await host.executor.countExecutions({ skill: "child", status: "success" })).toBe(
          maxThreads + 1,
        );
      });
    }

    it("keeps minThreads alive in the top pool only: the threads of nested calls' pools exit when idle", async () => {
      const runtime = createWorkerRuntime({ maxThreads: 1, minThreads: 1, idleTimeoutMs: 50 });
      const host = newHost({}, { runtimes: [runtime], maxCallDepth: 3 });
      const file = handlerFile(
        "descend.mjs",
        "export default async function descend(input, ctx) {",
        "  if (input.level === 3) return { level: input.level };",
        '  return await ctx.call("descend", { level: input.level + 1 });',
        "}",
      );
      registerWorker(host, "descend", file, { requires: { descend: "*" }, timeoutMs: 20_000 });

      const execution = await host.executor.execute("descend", { level: 0 });

      expect(execution.error).toBeNull();
      expect(execution.output).toEqual({ level: 3 });
      expect(await host.executor.countExecutions({ skill: "descend", status: "success" })).toBe(4);
      await waitFor(() => runtime.threadCount() === 1, "the nested pools' idle threads to exit");
      expect(runtime.threadCount()).toBe(1);
    });

    it("fails a worker skill that calls itself with CALL_DEPTH_EXCEEDED, not TIMEOUT", async () => {
      const host = newHost({ maxThreads: 1 }, { maxCallDepth: 3 });
      const file = handlerFile(
        "recurse.mjs",
        "export default async function recurse(input, ctx) {",
        '  return await ctx.call("recurse", { level: input.level + 1 });',
        "}",
      );
      registerWorker(host, "recurse", file, { requires: { recurse: "*" }, timeoutMs: 20_000 });

      const execution = await host.executor.execute("recurse", { level: 0 });

      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("CALL_DEPTH_EXCEEDED");
      // The top level and three nested levels ran; the fourth was refused.
      expect(await host.executor.countExecutions({ skill: "recurse" })).toBe(4);
      expect(await host.executor.countExecutions({ skill: "recurse", status: "timeout" })).toBe(0);
    });
  });
});
