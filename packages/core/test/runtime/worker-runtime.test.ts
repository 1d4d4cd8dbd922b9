import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { defineInterceptor, type SkillExecution } from "@skillbox/core";
import { createWorkerRuntime } from "@skillbox/core/internal";
import { describe, expect, it } from "vitest";
import { linesOf, registerWorker, THREAD_ID, useWorkerFixture, waitFor } from "./worker-fixture.js";

const fixture = useWorkerFixture();
const { newHost, handlerFile } = fixture;

/** Most handlers running at once according to a `start <id>` / `end <id>` log. */
function maxOverlap(log: string): number {
  let running = 0;
  let most = 0;
  for (const line of linesOf(log)) {
    running += line.startsWith("start ") ? 1 : -1;
    most = Math.max(most, running);
  }
  return most;
}

/** Writes the id of its thread to `input.marker`, then spins forever without yielding. */
const SPIN = [
  'import { writeFileSync } from "node:fs";',
  'import { threadId } from "node:worker_threads";',
  "export default function spin(input) {",
  "  writeFileSync(input.marker, String(threadId));",
  "  for (;;) {}",
  "}",
];

/** Logs `start <id>`, waits until `input.release` exists, logs `end <id>`. */
const HOLD = [
  'import { appendFileSync, existsSync } from "node:fs";',
  'import { setTimeout as sleep } from "node:timers/promises";',
  "export default async function hold(input) {",
  '  appendFileSync(input.log, "start " + input.id + "\\n");',
  "  while (!existsSync(input.release)) await sleep(5);",
  '  appendFileSync(input.log, "end " + input.id + "\\n");',
  "  return { id: input.id };",
  "}",
];

describe("worker runtime", () => {
  describe("running handlers in worker threads", () => {
    it("runs the handler module in a worker thread and records the execution like an inline one", async () => {
      const host = newHost();
      const file = handlerFile(
        "echo.mjs",
        'import { isMainThread, threadId } from "node:worker_threads";',
        "export default function echo(input) {",
        "  return { echoed: input.msg, isMainThread, threadId };",
        "}",
      );
      registerWorker(host, "echo", file, {
        input: { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] },
        output: { type: "object", properties: { echoed: { type: "string" } }, required: ["echoed"] },
      });

      const execution = await host.executor.execute(
        "echo",
        { msg: "hi" },
        { apiKeyId: "user-1", sessionId: "s-1" },
      );

      expect(execution.status).toBe("success");
      expect(execution.output).toMatchObject({ echoed: "hi", isMainThread: false });
      expect(execution.output.threadId).toBeGreaterThan(0);
      expect(await host.executor.getExecution(execution.id)).toMatchObject({
        status: "success",
        skillName: "echo",
        apiKeyId: "user-1",
        sessionId: "s-1",
        input: { msg: "hi" },
        output: { echoed: "hi", isMainThread: false },
        error: null,
        attempts: 1,
      });
    });

    it("still validates input before and output after the worker runs", async () => {
      const host = newHost();
      const file = handlerFile("wrong-output.mjs", "export default () => ({ count: 'not a number' });");
      registerWorker(host, "counted", file, {
        input: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
        output: { type: "object", properties: { count: { type: "number" } } },
      });
      const badInput = await host.executor.execute("counted", { n: "one" });
      expect(badInput.error?.code).toBe("INPUT_INVALID");
      const badOutput = await host.executor.execute("counted", { n: 1 });
      expect(badOutput.error?.code).toBe("OUTPUT_INVALID");
    });

    it("runs a TypeScript handler", async () => {
      const host = newHost();
      const file = handlerFile(
        "greet.ts",
        "interface GreetInput { name: string; times: number }",
        'enum Punctuation { Bang = "!" }',
        "export default function greet(input: GreetInput): { greeting: string } {",
        "  const name: string = input.name;",
        '  return { greeting: "hello " + name + Punctuation.Bang.repeat(input.times) };',
        "}",
      );
      registerWorker(host, "greet", file);
      const execution = await host.executor.execute("greet", { name: "ada", times: 2 });
      expect(execution.error).toBeNull();
      expect(execution.output).toEqual({ greeting: "hello ada!!" });
    });

    it("runs a handler that imports helper modules", async () => {
      const host = newHost();
      handlerFile("lib/shout.ts", 'export const shout = (text: string): string => text.toUpperCase() + "!";');
      handlerFile("lib/suffix.mjs", 'export const suffix = " (from a helper)";');
      const file = handlerFile(
        "loud.ts",
        'import { shout } from "./lib/shout.ts";',
        'import { suffix } from "./lib/suffix.mjs";',
        "export default (input: { msg: string }) => ({ loud: shout(input.msg) + suffix });",
      );
      registerWorker(host, "loud", file);
      const execution = await host.executor.execute("loud", { msg: "hey" });
      expect(execution.error).toBeNull();
      expect(execution.output).toEqual({ loud: "HEY! (from a helper)" });
    });

    it("runs the handler of a defineSkill({...}) default export", async () => {
      const host = newHost();
      const file = handlerFile(
        "defined.ts",
        'import { defineSkill } from "@skillbox/core";',
        "export default defineSkill({",
        '  name: "defined",',
        '  version: "1.0.0",',
        "  input: { type: 'object' },",
        "  handler: (input: { n: number }) => ({ squared: input.n * input.n }),",
        "});",
      );
      registerWorker(host, "defined", file);
      const execution = await host.executor.execute("defined", { n: 7 });
      expect(execution.error).toBeNull();
      expect(execution.output).toEqual({ squared: 49 });
    });

    it("hands the handler a context with executionId, attempt, owner, session, skill, logger and signal", async () => {
      const host = newHost();
      const file = handlerFile(
        "introspect.mjs",
        "export default function introspect(_input, ctx) {",
        '  ctx.logger.debug("hello from a worker");',
        "  return {",
        "    executionId: ctx.executionId,",
        "    attempt: ctx.attempt,",
        "    apiKeyId: ctx.apiKeyId,",
        "    sessionId: ctx.sessionId,",
        "    skill: { id: ctx.skill.id, name: ctx.skill.name, version: ctx.skill.version },",
        "    signalAborted: ctx.signal.aborted,",
        "    hasCall: typeof ctx.call === 'function',",
        "  };",
        "}",
      );
      const skill = registerWorker(host, "introspect", file, { apiKeyId: "tenant-a" });
      const execution = await host.executor.execute(
        "introspect",
        {},
        { apiKeyId: "tenant-a", sessionId: "session-9" },
      );
      expect(execution.output).toEqual({
        executionId: execution.id,
        attempt: 1,
        apiKeyId: "tenant-a",
        sessionId: "session-9",
        skill: { id: skill.id, name: "introspect", version: "1.0.0" },
        signalAborted: false,
        hasCall: true,
      });
    });

    it("passes inputs and outputs across the thread boundary intact", async () => {
      const host = newHost();
      const file = handlerFile(
        "mirror.mjs",
        "export default function mirror(input) {",
        "  return {",
        "    received: input,",
        "    when: new Date(Date.UTC(2024, 0, 2)),",
        "    tags: new Map([['a', 1]]),",
        "    ids: new Set([1, 2]),",
        "    nothing: null,",
        "  };",
        "}",
      );
      registerWorker(host, "mirror", file);
      const input = {
        text: "héllo ☃ — 👋",
        numbers: [0, -1.5, 1e21, Number.MAX_SAFE_INTEGER],
        nested: { deep: { deeper: [true, false, null, { empty: {} }] } },
      };
      const execution = await host.executor.execute("mirror", input);
      expect(execution.error).toBeNull();
      expect(execution.output.received).toEqual(input);
      expect(execution.output.when).toBeInstanceOf(Date);
      expect((execution.output.when as Date).toISOString()).toBe("2024-01-02T00:00:00.000Z");
      expect(execution.output.tags).toEqual(new Map([["a", 1]]));
      expect(execution.output.ids).toEqual(new Set([1, 2]));
      expect(execution.output.nothing).toBeNull();
    });

    it("starts no thread until a worker skill runs, and none is left after close()", async () => {
      const runtime = createWorkerRuntime({ maxThreads: 2 });
      const host = newHost({}, { runtimes: [runtime] });
      registerWorker(host, "which-thread", handlerFile("which-thread.mjs", ...THREAD_ID));
      expect(runtime.threadCount()).toBe(0);
      const execution = await host.executor.execute("which-thread", {});
      expect(execution.status).toBe("success");
      expect(runtime.threadCount()).toBeGreaterThanOrEqual(1);
      expect(runtime.threadCount()).toBeLessThanOrEqual(2);
      await host.executor.close();
      expect(runtime.threadCount()).toBe(0);
    });
  });

  describe("errors", () => {
    it("records a thrown Error as HANDLER_ERROR keeping its message and the worker's stack", async () => {
      const host = newHost();
      const file = handlerFile(
        "throws.mjs",
        "function deepInside() {",
        '  throw new TypeError("the widget is broken");',
        "}",
        "export default function throws() {",
        "  deepInside();",
        "}",
      );
      registerWorker(host, "throws", file);
      const execution = await host.executor.execute("throws", {});
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("HANDLER_ERROR");
      expect(execution.error?.message).toContain("throws@1.0.0");
      expect(execution.error?.message).toContain("the widget is broken");
      const data = execution.error?.data as { name: string; stack: string };
      expect(data.name).toBe("TypeError");
      expect(data.stack).toContain("the widget is broken");
      expect(data.stack).toContain(file);
      expect(data.stack).toContain("deepInside");
    });

    it("keeps the code, message and data of a SkillboxError thrown in the worker", async () => {
      const host = newHost();
      const file = handlerFile(
        "declines.ts",
        'import { SkillboxError } from "@skillbox/core";',
        "export default function declines(input: { card: string }): never {",
        '  throw new SkillboxError("PAYMENT_DECLINED", "card " + input.card + " was declined", {',
        "    data: { card: input.card, reason: { kind: 'insufficient-funds', retryAfter: null } },",
        "  });",
        "}",
      );
      registerWorker(host, "declines", file);
      const execution = await host.executor.execute("declines", { card: "4242" });
      expect(execution.status).toBe("error");
      expect(execution.error).toEqual({
        code: "PAYMENT_DECLINED",
        message: "card 4242 was declined",
        data: { card: "4242", reason: { kind: "insufficient-funds", retryAfter: null } },
      });
      expect((await host.executor.getExecution(execution.id))?.error).toEqual(execution.error);
    });

    it("keeps retryable: false of a SkillboxError thrown in the worker (no retry)", async () => {
      const host = newHost();
      const attemptsLog = fixture.tree.path("attempts.log");
      const file = handlerFile(
        "fatal.mjs",
        'import { appendFileSync } from "node:fs";',
        'import { SkillboxError } from "@skillbox/core";',
        "export default function fatal(input, ctx) {",
        '  appendFileSync(input.log, ctx.attempt + "\\n");',
        '  throw new SkillboxError("FATAL", "do not try again", { retryable: false });',
        "}",
      );
      registerWorker(host, "fatal", file, { retry: { maxAttempts: 3, initialDelayMs: 1 } });
      const execution = await host.executor.execute("fatal", { log: attemptsLog });
      expect(execution.error?.code).toBe("FATAL");
      expect(execution.attempts).toBe(1);
      expect(linesOf(attemptsLog)).toEqual(["1"]);
    });

    it("fails with OUTPUT_INVALID, explaining why, when the output cannot leave the worker", async () => {
      const host = newHost();
      const file = handlerFile(
        "unclonable.mjs",
        "export default function unclonable() {",
        "  return { ok: true, format: () => 'a function' };",
        "}",
      );
      registerWorker(host, "unclonable", file, { retry: { maxAttempts: 3, initialDelayMs: 1 } });
      const execution = await host.executor.execute("unclonable", {});
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("OUTPUT_INVALID");
      expect(execution.error?.message).toContain("unclonable@1.0.0");
      expect(execution.error?.message).toContain("cannot leave the worker thread");
      expect(execution.error?.message).toContain("plain data");
      expect(execution.attempts).toBe(1);
    });

    it("fails with HANDLER_NOT_FOUND, explaining the fix, for a worker skill registered with a handler name", async () => {
      const host = newHost();
      // A registered function cannot run in a worker thread: the worker loads a module.
      host.executor.registerHandler("plain-name", () => "ran inline");
      host.registry.register({
        name: "named",
        version: "1.0.0",
        apiKeyId: "public",
        handler: "plain-name",
        runtime: "worker",
        retry: { maxAttempts: 3, initialDelayMs: 1 },
      });
      const execution = await host.executor.execute("named", {});
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("HANDLER_NOT_FOUND");
      expect(execution.error?.message).toContain("named@1.0.0");
      expect(execution.error?.message).toContain("worker thread");
      expect(execution.error?.message).toContain("file: URL");
      expect(execution.error?.message).toContain('"plain-name"');
      expect(execution.attempts).toBe(1);
    });

    it("fails with HANDLER_INVALID when the module's default export is not a handler", async () => {
      const host = newHost();
      const file = handlerFile("not-a-handler.mjs", "export default { answer: 42 };");
      registerWorker(host, "not-a-handler", file, { retry: { maxAttempts: 3, initialDelayMs: 1 } });
      const execution = await host.executor.execute("not-a-handler", {});
      expect(execution.error?.code).toBe("HANDLER_INVALID");
      expect(execution.error?.message).toContain(file);
      expect(execution.error?.message).toContain("default export");
      expect(execution.attempts).toBe(1);
    });

    // The error codes document HANDLER_INVALID as "a handler module fails to load", and the loader
    // reports load failures of inline skills that way (never retried).
    it("fails with HANDLER_INVALID naming the file, without retrying, when the module fails to load", async () => {
      const host = newHost();
      const missing = fixture.tree.path("handlers/missing.mjs");
      const broken = handlerFile("broken.ts", "export default function (: {", "");
      registerWorker(host, "missing", missing, { retry: { maxAttempts: 3, initialDelayMs: 1 } });
      registerWorker(host, "broken", broken, { retry: { maxAttempts: 3, initialDelayMs: 1 } });
      for (const [name, file] of [
        ["missing", missing],
        ["broken", broken],
      ] as const) {
        const execution = await host.executor.execute(name, {});
        expect(execution.status, name).toBe("error");
        expect(execution.error?.code, name).toBe("HANDLER_INVALID");
        expect(execution.error?.message, name).toContain(file);
        expect(execution.attempts, name).toBe(1);
      }
    });
  });

  describe("timeouts and cancellation", () => {
    it("terminates a CPU-bound infinite loop at its timeout, and the pool keeps serving on a new thread", async () => {
      // One thread: if the spinning thread were not terminated, nothing could run after it.
      const runtime = createWorkerRuntime({ maxThreads: 1 });
      const host = newHost({}, { runtimes: [runtime] });
      registerWorker(host, "which-thread", handlerFile("which-thread.mjs", ...THREAD_ID));
      registerWorker(host, "spin", handlerFile("spin.mjs", ...SPIN), { timeoutMs: 300 });
      const marker = fixture.tree.path("spin-thread");

      const before = await host.executor.execute("which-thread", {});
      expect(before.status).toBe("success");

      const spun = await host.executor.execute("spin", { marker });
      expect(spun.status).toBe("timeout");
      expect(spun.error?.code).toBe("TIMEOUT");
      expect(spun.error?.message).toContain("spin@1.0.0");
      expect(spun.duration).toBeGreaterThanOrEqual(250);
      expect(spun.duration).toBeLessThan(5_000);
      expect((await host.executor.getExecution(spun.id))?.status).toBe("timeout");
      // The loop ran on the pool's only thread, the one that answered before.
      expect(Number(readFileSync(marker, "utf8"))).toBe(before.output);
      // Terminated and removed from the pool (minThreads is 0, so nothing replaced it yet).
      expect(runtime.threadCount()).toBe(0);

      const after = await host.executor.execute("which-thread", {}, { timeoutMs: 10_000 });
      expect(after.status).toBe("success");
      expect(after.output).not.toBe(before.output);
      const again = await host.executor.execute("which-thread", {}, { timeoutMs: 10_000 });
      expect(again.output).toBe(after.output);
    });

    it("stops a loop at a per-call timeout too", async () => {
      const host = newHost({ maxThreads: 1 });
      registerWorker(host, "spin", handlerFile("spin.mjs", ...SPIN));
      registerWorker(host, "which-thread", handlerFile("which-thread.mjs", ...THREAD_ID));
      const spun = await host.executor.execute(
        "spin",
        { marker: fixture.tree.path("marker") },
        { timeoutMs: 200 },
      );
      expect(spun.status).toBe("timeout");
      const next = await host.executor.execute("which-thread", {});
      expect(next.status).toBe("success");
    });

    it("terminates a spinning worker when the caller cancels, and the pool keeps serving", async () => {
      const host = newHost({ maxThreads: 1 });
      registerWorker(host, "which-thread", handlerFile("which-thread.mjs", ...THREAD_ID));
      registerWorker(host, "spin", handlerFile("spin.mjs", ...SPIN), { timeoutMs: 60_000 });
      const marker = fixture.tree.path("spin-thread");
      const controller = new AbortController();

      const pending = host.executor.execute("spin", { marker }, { signal: controller.signal });
      await waitFor(() => existsSync(marker), "the spinning handler to start");
      controller.abort(new Error("the user pressed stop"));
      const cancelled = await pending;

      expect(cancelled.status).toBe("cancelled");
      expect(cancelled.error?.code).toBe("CANCELLED");
      expect(cancelled.duration).toBeLessThan(10_000);
      expect((await host.executor.getExecution(cancelled.id))?.status).toBe("cancelled");
      const next = await host.executor.execute("which-thread", {}, { timeoutMs: 10_000 });
      expect(next.status).toBe("success");
      expect(next.output).not.toBe(Number(readFileSync(marker, "utf8")));
    });

    it("cancels a task still waiting for a thread without running it", async () => {
      const host = newHost({ maxThreads: 1 });
      registerWorker(host, "hold", handlerFile("hold.mjs", ...HOLD));
      const log = fixture.tree.path("hold.log");
      const release = fixture.tree.path("release");
      const first = host.executor.execute("hold", { id: "first", log, release });
      await waitFor(() => linesOf(log).length === 1, "the first execution to start");
      const controller = new AbortController();
      const queued = host.executor.execute(
        "hold",
        { id: "queued", log, release },
        { signal: controller.signal },
      );
      await waitFor(
        async () => (await host.executor.countExecutions({ skill: "hold", status: "running" })) === 2,
        "the second execution to be queued",
      );
      controller.abort();
      expect((await queued).status).toBe("cancelled");
      writeFileSync(release, "");
      expect((await first).status).toBe("success");
      expect(linesOf(log)).toEqual(["start first", "end first"]);
    });
  });

  describe("memory limits", () => {
    it("fails a heap bomb with OUT_OF_MEMORY, without retrying, and the host and pool live on", async () => {
      const host = newHost();
      const bomb = handlerFile(
        "bomb.mjs",
        "export default function bomb() {",
        "  const hoard = [];",
        "  for (;;) hoard.push(new Array(1_000_000).fill(hoard.length));",
        "}",
      );
      registerWorker(host, "bomb", bomb, {
        memoryMb: 64,
        timeoutMs: 20_000,
        retry: { maxAttempts: 3, initialDelayMs: 1 },
      });
      registerWorker(host, "small", handlerFile("small.mjs", ...THREAD_ID), { memoryMb: 64 });
      host.executor.registerHandler("inline-echo", (input) => input);
      host.registry.register({
        name: "inline-echo",
        version: "1.0.0",
        apiKeyId: "public",
        handler: "inline-echo",
      });

      const execution = await host.executor.execute("bomb", {});

      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("OUT_OF_MEMORY");
      expect(execution.error?.message).toContain("bomb@1.0.0");
      expect(execution.error?.message).toContain("64 MiB");
      expect(execution.error?.message).toContain("memoryMb");
      expect(execution.attempts).toBe(1);
      expect((await host.executor.getExecution(execution.id))?.error?.code).toBe("OUT_OF_MEMORY");
      // The host is alive and the pool of that limit serves the next task.
      expect((await host.executor.execute("small", {})).status).toBe("success");
      expect((await host.executor.execute("inline-echo", { still: "alive" })).output).toEqual({
        still: "alive",
      });
    });

    it("runs a skill within its memory limit", async () => {
      const host = newHost();
      const file = handlerFile(
        "modest.mjs",
        "export default function modest() {",
        "  const items = Array.from({ length: 100_000 }, (_, index) => index);",
        "  return { sum: items.reduce((total, value) => total + value, 0) };",
        "}",
      );
      registerWorker(host, "modest", file, { memoryMb: 64 });
      const execution = await host.executor.execute("modest", {});
      expect(execution.error).toBeNull();
      expect(execution.output).toEqual({ sum: 4_999_950_000 });
    });
  });

  describe("pool size, concurrency and queueing", () => {
    it("runs at most maxThreads handlers at once", async () => {
      for (const maxThreads of [1, 2]) {
        const host = newHost({ maxThreads });
        registerWorker(host, "hold", handlerFile(`hold-${maxThreads}.mjs`, ...HOLD));
        const log = fixture.tree.path(`overlap-${maxThreads}.log`);
        const release = fixture.tree.path(`release-${maxThreads}`);
        const executions = ["a", "b", "c"].map((id) => host.executor.execute("hold", { id, log, release }));
        await waitFor(() => linesOf(log).length === maxThreads, `${maxThreads} handlers to start`);
        writeFileSync(release, "");
        for (const execution of await Promise.all(executions)) expect(execution.status).toBe("success");
        expect(maxOverlap(log)).toBe(maxThreads);
      }
    });

    it("limits one skill to maxConcurrencyPerSkill and fails excess beyond maxQueue with BUSY", async () => {
      const host = newHost({ maxThreads: 2, maxConcurrencyPerSkill: 1, maxQueue: 1 });
      registerWorker(host, "hold", handlerFile("hold.mjs", ...HOLD));
      registerWorker(host, "which-thread", handlerFile("which-thread.mjs", ...THREAD_ID));
      const log = fixture.tree.path("hold.log");
      const release = fixture.tree.path("release");

      const first = host.executor.execute("hold", { id: "first", log, release });
      await waitFor(() => linesOf(log).length === 1, "the first execution to start");
      const second = host.executor.execute("hold", { id: "second", log, release });
      const third = await host.executor.execute("hold", { id: "third", log, release });

      expect(third.status).toBe("error");
      expect(third.error?.code).toBe("BUSY");
      expect(third.error?.message).toContain("hold@1.0.0");
      expect(third.error?.message).toMatch(/running/);
      expect(third.error?.message).toMatch(/waiting/);
      expect(third.error?.message).toContain("try again later");
      expect((await host.executor.getExecution(third.id))?.error?.code).toBe("BUSY");
      // Another skill is not held back by this one's limit: the pool's second thread serves it.
      expect((await host.executor.execute("which-thread", {})).status).toBe("success");

      writeFileSync(release, "");
      expect((await first).status).toBe("success");
      expect((await second).status).toBe("success");
      expect(linesOf(log)).toEqual(["start first", "end first", "start second", "end second"]);
    });

    it("fails with BUSY when the pool's queue is full", async () => {
      const host = newHost({ maxThreads: 1, maxQueue: 1 });
      registerWorker(host, "hold", handlerFile("hold.mjs", ...HOLD));
      const log = fixture.tree.path("hold.log");
      const release = fixture.tree.path("release");

      const running = host.executor.execute("hold", { id: "running", log, release });
      await waitFor(() => linesOf(log).length === 1, "the first execution to start");
      const queued = host.executor.execute("hold", { id: "queued", log, release });
      const rejected = await host.executor.execute("hold", { id: "rejected", log, release });

      expect(rejected.status).toBe("error");
      expect(rejected.error?.code).toBe("BUSY");
      expect(rejected.error?.message).toContain("hold@1.0.0");
      expect(rejected.error?.message).toContain("queue is full");
      writeFileSync(release, "");
      expect((await running).status).toBe("success");
      expect((await queued).status).toBe("success");
      expect(linesOf(log)).not.toContain("start rejected");
    });

    it("frees the queue slot of an execution cancelled while it waits for its turn", async () => {
      const host = newHost({ maxThreads: 2, maxConcurrencyPerSkill: 1, maxQueue: 1 });
      registerWorker(host, "hold", handlerFile("hold.mjs", ...HOLD));
      const log = fixture.tree.path("hold.log");
      const release = fixture.tree.path("release");

      const first = host.executor.execute("hold", { id: "first", log, release });
      await waitFor(() => linesOf(log).length === 1, "the first execution to start");
      const controller = new AbortController();
      const abandoned = host.executor.execute(
        "hold",
        { id: "abandoned", log, release },
        { signal: controller.signal },
      );
      await waitFor(
        async () => (await host.executor.countExecutions({ skill: "hold", status: "running" })) === 2,
        "the second execution to be queued",
      );
      controller.abort();
      expect((await abandoned).status).toBe("cancelled");

      // The queue is empty again: this one waits for its turn instead of failing with BUSY.
      let nextSettled = false;
      const next = host.executor.execute("hold", { id: "next", log, release });
      next.then(() => {
        nextSettled = true;
      });
      await waitFor(
        async () =>
          nextSettled || (await host.executor.countExecutions({ skill: "hold", status: "running" })) === 2,
        "the next execution to be queued or to fail",
      );
      writeFileSync(release, "");
      expect((await first).status).toBe("success");
      const settled = await next;
      expect(settled.error).toBeNull();
      expect(settled.status).toBe("success");
      expect(linesOf(log)).not.toContain("start abandoned");
    });
  });

  describe("executor features around worker skills", () => {
    it("retries a failing worker skill and records the attempts", async () => {
      const host = newHost();
      const file = handlerFile(
        "flaky.mjs",
        "export default function flaky(_input, ctx) {",
        '  if (ctx.attempt < 3) throw new Error("flaked on attempt " + ctx.attempt);',
        "  return { succeededOn: ctx.attempt };",
        "}",
      );
      registerWorker(host, "flaky", file, { retry: { maxAttempts: 3, initialDelayMs: 1, jitter: 0 } });
      const execution = await host.executor.execute("flaky", {});
      expect(execution.status).toBe("success");
      expect(execution.output).toEqual({ succeededOn: 3 });
      expect(execution.attempts).toBe(3);
      expect((await host.executor.getExecution(execution.id))?.attempts).toBe(3);
    });

    it("gives up after maxAttempts and records the last error", async () => {
      const host = newHost();
      const file = handlerFile(
        "always-fails.mjs",
        'export default (_input, ctx) => { throw new Error("failed attempt " + ctx.attempt); };',
      );
      registerWorker(host, "always-fails", file);
      const execution = await host.executor.execute(
        "always-fails",
        {},
        { retry: { maxAttempts: 2, initialDelayMs: 1 } },
      );
      expect(execution.status).toBe("error");
      expect(execution.attempts).toBe(2);
      expect(execution.error?.message).toContain("failed attempt 2");
    });

    it("retries an attempt that timed out on a fresh thread", async () => {
      const host = newHost({ maxThreads: 1 });
      const file = handlerFile(
        "slow-start.mjs",
        'import { threadId } from "node:worker_threads";',
        "export default function slowStart(_input, ctx) {",
        "  if (ctx.attempt === 1) for (;;) {}",
        "  return { attempt: ctx.attempt, threadId };",
        "}",
      );
      // Long enough for the replacement thread to start and load the module within attempt 2.
      registerWorker(host, "slow-start", file, {
        timeoutMs: 2_000,
        retry: { maxAttempts: 2, initialDelayMs: 1 },
      });
      const execution = await host.executor.execute("slow-start", {});
      expect(execution.status).toBe("success");
      expect(execution.attempts).toBe(2);
      expect(execution.output).toMatchObject({ attempt: 2 });
    });

    it("runs interceptors around worker skills: before rewrites the input, after the output", async () => {
      const host = newHost();
      const trace: string[] = [];
      host.executor.use(
        defineInterceptor({
          name: "shape",
          before(context) {
            trace.push(`before:${context.skill.runtime}`);
            return { input: { ...(context.input as object), word: "rewritten" } };
          },
          after(_context, result) {
            trace.push(`after:${result.attempts}`);
            return { output: { ...(result.output as object), wrapped: true } };
          },
        }),
      );
      const file = handlerFile(
        "sees.mjs",
        'import { isMainThread } from "node:worker_threads";',
        "export default (input) => ({ saw: input.word, isMainThread });",
      );
      registerWorker(host, "sees", file);
      const execution = await host.executor.execute("sees", { word: "original" });
      expect(execution.output).toEqual({ saw: "rewritten", isMainThread: false, wrapped: true });
      expect(trace).toEqual(["before:worker", "after:1"]);
    });

    it("hands onError the worker's error code, and lets it recover", async () => {
      const host = newHost();
      const seen: string[] = [];
      host.executor.use(
        defineInterceptor({
          name: "fallback",
          onError(_context, error) {
            seen.push(error.code);
            return { output: { fallback: error.message } };
          },
        }),
      );
      const file = handlerFile(
        "out-of-stock.mjs",
        'import { SkillboxError } from "@skillbox/core";',
        "export default () => {",
        '  throw new SkillboxError("OUT_OF_STOCK", "no widgets left");',
        "};",
      );
      registerWorker(host, "out-of-stock", file);
      const execution = await host.executor.execute("out-of-stock", {});
      expect(seen).toEqual(["OUT_OF_STOCK"]);
      expect(execution.status).toBe("success");
      expect(execution.output).toEqual({ fallback: "no widgets left" });
    });

    it("hands onError a TIMEOUT when the worker is terminated", async () => {
      const host = newHost({ maxThreads: 1 });
      const seen: string[] = [];
      host.executor.use(
        defineInterceptor({
          name: "observer",
          onError(_context, error) {
            seen.push(error.code);
            return undefined;
          },
        }),
      );
      registerWorker(host, "spin", handlerFile("spin.mjs", ...SPIN), { timeoutMs: 200 });
      const execution = await host.executor.execute("spin", { marker: fixture.tree.path("marker") });
      expect(execution.status).toBe("timeout");
      expect(seen).toEqual(["TIMEOUT"]);
    });

    it("runs a worker skill once per idempotency key and owner", async () => {
      const host = newHost();
      const file = handlerFile(
        "charge.mjs",
        'import { appendFileSync } from "node:fs";',
        "export default function charge(input) {",
        '  appendFileSync(input.log, input.amount + "\\n");',
        "  return { charged: input.amount };",
        "}",
      );
      registerWorker(host, "charge", file);
      const log = fixture.tree.path("charges.log");

      const first = await host.executor.execute(
        "charge",
        { amount: 10, log },
        { apiKeyId: "shop", idempotencyKey: "order-1" },
      );
      const repeat = await host.executor.execute(
        "charge",
        { amount: 10, log },
        { apiKeyId: "shop", idempotencyKey: "order-1" },
      );
      expect(repeat.id).toBe(first.id);
      expect(repeat.output).toEqual({ charged: 10 });
      expect(linesOf(log)).toEqual(["10"]);

      const concurrent = await Promise.all(
        Array.from({ length: 4 }, () =>
          host.executor.execute(
            "charge",
            { amount: 20, log },
            { apiKeyId: "shop", idempotencyKey: "order-2" },
          ),
        ),
      );
      expect(new Set(concurrent.map((execution: SkillExecution) => execution.id)).size).toBe(1);
      expect(linesOf(log)).toEqual(["10", "20"]);
      expect(await host.executor.countExecutions({ skill: "charge" })).toBe(2);
    });
  });

  describe("ctx.call from a worker", () => {
    it("calls a declared dependency from inside the worker, recorded as a nested execution", async () => {
      const host = newHost();
      registerWorker(
        host,
        "double",
        handlerFile("double.mjs", "export default (input) => ({ doubled: input.n * 2 });"),
      );
      host.registry.register({
        name: "other",
        version: "1.0.0",
        apiKeyId: "public",
        handler: "other",
      });
      host.executor.registerHandler("other", () => "other");
      const caller = handlerFile(
        "caller.mjs",
        "export default async function caller(input, ctx) {",
        '  const { doubled } = await ctx.call("double", { n: input.n });',
        "  let undeclared;",
        "  try {",
        '    await ctx.call("other", {});',
        "  } catch (error) {",
        "    undeclared = { code: error.code, message: error.message };",
        "  }",
        "  return { doubled, undeclared };",
        "}",
      );
      registerWorker(host, "caller", caller, { requires: { double: "^1.0.0" } });

      const execution = await host.executor.execute(
        "caller",
        { n: 21 },
        { apiKeyId: "user-1", sessionId: "s" },
      );

      expect(execution.error).toBeNull();
      expect(execution.output.doubled).toBe(42);
      expect(execution.output.undeclared.code).toBe("UNDECLARED_DEPENDENCY");
      expect(execution.output.undeclared.message).toContain("requires");
      const nested = await host.executor.listExecutions({ parentExecutionId: execution.id });
      expect(nested).toHaveLength(1);
      expect(nested[0]).toMatchObject({
        skillName: "double",
        status: "success",
        output: { doubled: 42 },
        apiKeyId: "user-1",
        sessionId: "s",
      });
    });

    it("propagates a nested failure's code into the worker and back out", async () => {
      const host = newHost();
      host.registry.register({ name: "stock", version: "1.0.0", apiKeyId: "public", handler: "stock" });
      host.executor.registerHandler("stock", () => {
        throw Object.assign(new Error("no widgets left"), { name: "SkillboxError", code: "OUT_OF_STOCK" });
      });
      const caller = handlerFile(
        "order.mjs",
        "export default async function order(_input, ctx) {",
        '  return await ctx.call("stock", {});',
        "}",
      );
      registerWorker(host, "order", caller, { requires: { stock: "1.x" } });
      const execution = await host.executor.execute("order", {});
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("OUT_OF_STOCK");
      expect(execution.error?.message).toContain("no widgets left");
    });

    it("fails ctx.call with UNDECLARED_DEPENDENCY for a worker skill without requires", async () => {
      const host = newHost();
      registerWorker(host, "double", handlerFile("double.mjs", "export default (input) => input.n * 2;"));
      const caller = handlerFile(
        "undeclared.mjs",
        "export default async function undeclared(_input, ctx) {",
        '  return await ctx.call("double", { n: 1 });',
        "}",
      );
      registerWorker(host, "undeclared", caller);
      const execution = await host.executor.execute("undeclared", {});
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("UNDECLARED_DEPENDENCY");
      expect(execution.error?.message).toContain("requires");
      expect(execution.attempts).toBe(1);
      expect(await host.executor.listExecutions({ parentExecutionId: execution.id })).toEqual([]);
    });
  });

  describe("reloading handler code", () => {
    it("runs the new code, helpers included, on a live thread once the skill's code hash changes", async () => {
      const host = newHost({ maxThreads: 1 });
      const helper = handlerFile("lib/word.ts", 'export const word = "old";');
      const file = handlerFile(
        "versioned.ts",
        'import { threadId } from "node:worker_threads";',
        'import { word } from "./lib/word.ts";',
        'export default () => ({ word, reply: "v1", threadId });',
      );
      const register = (codeHash: string) =>
        registerWorker(host, "versioned", file, {
          code: { modulePath: file, codeHash, root: dirname(file) },
        });

      register("hash-1");
      const before = await host.executor.execute("versioned", {});
      expect(before.output).toMatchObject({ word: "old", reply: "v1" });

      fixture.tree.write("handlers/lib/word.ts", 'export const word = "new";\n');
      fixture.tree.write(
        "handlers/versioned.ts",
        [
          'import { threadId } from "node:worker_threads";',
          'import { word } from "./lib/word.ts";',
          'export default () => ({ word, reply: "v2", threadId });',
          "",
        ].join("\n"),
      );
      register("hash-2");
      const after = await host.executor.execute("versioned", {});

      expect(after.output).toMatchObject({ word: "new", reply: "v2" });
      // Same thread: the worker itself dropped its cached module, it was not merely replaced.
      expect(after.output.threadId).toBe(before.output.threadId);
      expect(helper).toBe(fixture.tree.path("handlers/lib/word.ts"));
    });
  });
});
