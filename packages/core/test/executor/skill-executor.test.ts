import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import {
  createSkillHost,
  DEFAULT_RETRY_POLICY,
  SkillboxError,
  type SkillContext,
  type SkillExecution,
  type SkillLogger,
} from "@skillbox/core";
import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { describe, expect, it } from "vitest";
import { retryDelay } from "../../src/executor/retry-policy.js";
import { deferred, registerSkill as register, rejection, useTemporaryHosts } from "./executor-test-bed.js";

const newHost = useTemporaryHosts();

/** Waits (without sleeping a fixed time) until the wall clock is past `instant`. */
async function clockPast(instant: number): Promise<void> {
  while (Date.now() <= instant) await new Promise((resolve) => setImmediate(resolve));
}

const never = () => new Promise<never>(() => {});

describe("SkillExecutor", () => {
  describe("resolution", () => {
    it("throws SKILL_NOT_FOUND for an unknown skill and records nothing", async () => {
      const host = newHost();
      const error = await rejection(host.executor.execute("missing", {}), "SKILL_NOT_FOUND");
      expect(error.message).toContain('"missing"');
      expect(await host.executor.countExecutions()).toBe(0);
    });

    it("throws SKILL_NOT_FOUND listing the available versions when no version satisfies the range", async () => {
      const host = newHost();
      register(host, { name: "echo", version: "1.0.0" });
      register(host, { name: "echo", version: "1.2.0" });
      host.executor.registerHandler("echo", (input) => input);
      const error = await rejection(host.executor.execute("echo@^2.0.0", {}), "SKILL_NOT_FOUND");
      expect(error.message).toContain("1.2.0");
      expect(error.data).toMatchObject({ name: "echo", range: "^2.0.0" });
      expect((error.data as { available: string[] }).available.sort()).toEqual(["1.0.0", "1.2.0"]);
      expect(await host.executor.countExecutions()).toBe(0);
    });

    it("throws SKILL_REFERENCE_INVALID for a version range that is not semver", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      host.executor.registerHandler("echo", (input) => input);
      const error = await rejection(host.executor.execute("echo@not-a-range", {}), "SKILL_REFERENCE_INVALID");
      expect(error.message).toContain("not-a-range");
      expect(await host.executor.countExecutions()).toBe(0);
    });

    it("throws SKILL_NOT_FOUND for a skill owned by another caller", async () => {
      const host = newHost();
      register(host, { name: "private", apiKeyId: "tenant-a" });
      host.executor.registerHandler("private", () => "secret");
      await rejection(host.executor.execute("private", {}, { apiKeyId: "tenant-b" }), "SKILL_NOT_FOUND");
      const own = await host.executor.execute("private", {}, { apiKeyId: "tenant-a" });
      expect(own.status).toBe("success");
      expect(await host.executor.countExecutions()).toBe(1);
    });

    it("throws SKILL_DISABLED for a disabled skill, records nothing, and runs it again once enabled", async () => {
      const host = newHost();
      const skill = register(host, { name: "echo", enabled: false });
      let calls = 0;
      host.executor.registerHandler("echo", () => {
        calls++;
        return "ok";
      });
      const error = await rejection(host.executor.execute("echo@1.0.0", {}), "SKILL_DISABLED");
      expect(error.message).toContain("echo@1.0.0");
      expect(error.data).toEqual({ skillId: skill.id });
      expect(calls).toBe(0);
      expect(await host.executor.countExecutions()).toBe(0);

      host.registry.setEnabledById(skill.id, true);
      const execution = await host.executor.execute("echo@1.0.0", {});
      expect(execution.status).toBe("success");
      expect(calls).toBe(1);
    });

    it("runs the highest stable version for a bare name and the matching one for a range", async () => {
      const host = newHost();
      register(host, { name: "versioned", version: "1.0.0", handler: "v1" });
      register(host, { name: "versioned", version: "1.4.0", handler: "v14" });
      register(host, { name: "versioned", version: "2.0.0-beta.1", handler: "v2beta" });
      host.executor.registerHandler("v1", () => "1.0.0");
      host.executor.registerHandler("v14", () => "1.4.0");
      host.executor.registerHandler("v2beta", () => "2.0.0-beta.1");
      expect((await host.executor.execute("versioned", {})).output).toBe("1.4.0");
      expect((await host.executor.execute("versioned@~1.0.0", {})).output).toBe("1.0.0");
      const beta = await host.executor.execute("versioned@^2.0.0-beta.0", {});
      expect(beta.output).toBe("2.0.0-beta.1");
      expect(beta.skillVersion).toBe("2.0.0-beta.1");
    });
  });

  describe("audit trail", () => {
    it("writes the row before the handler runs and commits the final state before execute() resolves", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      let seenWhileRunning: SkillExecution | undefined;
      host.executor.registerHandler("echo", async (input: { msg: string }, ctx) => {
        seenWhileRunning = await host.executor.getExecution(ctx.executionId);
        return { echoed: input.msg };
      });
      const execution = await host.executor.execute(
        "echo",
        { msg: "hi" },
        { apiKeyId: "user-1", sessionId: "s-1" },
      );
      expect(seenWhileRunning?.status).toBe("running");
      expect(seenWhileRunning?.finishedAt).toBeNull();
      expect(execution.status).toBe("success");
      const stored = await host.executor.getExecution(execution.id);
      expect(stored).toMatchObject({
        id: execution.id,
        skillId: execution.skillId,
        skillName: "echo",
        skillVersion: "1.0.0",
        apiKeyId: "user-1",
        sessionId: "s-1",
        parentExecutionId: null,
        idempotencyKey: null,
        input: { msg: "hi" },
        output: { echoed: "hi" },
        status: "success",
        error: null,
        attempts: 1,
      });
      expect(stored?.duration).toBeGreaterThanOrEqual(0);
      expect(stored?.finishedAt).not.toBeNull();
      expect(Date.parse(stored!.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(stored!.createdAt));
    });

    it("hands the handler a context with signal, executionId, attempt, owner, session, skill and logger", async () => {
      const host = newHost();
      const skill = register(host, { name: "introspect" });
      let seen: SkillContext | undefined;
      host.executor.registerHandler("introspect", (_input, ctx) => {
        seen = ctx;
        ctx.logger.info("hello from the handler");
        return null;
      });
      const execution = await host.executor.execute("introspect", {}, { apiKeyId: "me", sessionId: "sess" });
      expect(seen?.signal).toBeInstanceOf(AbortSignal);
      expect(seen?.signal.aborted).toBe(false);
      expect(seen?.executionId).toBe(execution.id);
      expect(seen?.attempt).toBe(1);
      expect(seen?.apiKeyId).toBe("me");
      expect(seen?.sessionId).toBe("sess");
      expect(seen?.skill.id).toBe(skill.id);
      expect(typeof seen?.logger.info).toBe("function");
      expect(typeof seen?.call).toBe("function");
    });

    it("defaults the caller to public and the session to null", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      host.executor.registerHandler("echo", () => 1);
      const execution = await host.executor.execute("echo", {});
      expect(execution.apiKeyId).toBe("public");
      expect(execution.sessionId).toBeNull();
      expect((await host.executor.getExecution(execution.id))?.apiKeyId).toBe("public");
    });

    it("stores a marker for an output that cannot be serialised, while returning the real output", async () => {
      const host = newHost();
      register(host, { name: "cyclic" });
      const cyclic: Record<string, unknown> = { name: "loop" };
      cyclic.self = cyclic;
      host.executor.registerHandler("cyclic", () => cyclic);
      const execution = await host.executor.execute("cyclic", {});
      expect(execution.status).toBe("success");
      expect(execution.output).toBe(cyclic);
      const stored = await host.executor.getExecution(execution.id);
      expect(stored?.status).toBe("success");
      expect(stored?.output).toMatch(/not serialisable/);
    });

    it("rejects new executions with BUSY once closed", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      host.executor.registerHandler("echo", () => 1);
      await host.executor.close();
      await rejection(host.executor.execute("echo", {}), "BUSY");
    });

    it("waits for running executions on close()", async () => {
      const host = newHost();
      register(host, { name: "slow" });
      const started = deferred();
      const release = deferred();
      host.executor.registerHandler("slow", async () => {
        started.resolve();
        await release.promise;
        return "done";
      });
      const running = host.executor.execute("slow", {});
      await started.promise;
      let closed = false;
      const closing = host.executor.close().then(() => {
        closed = true;
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(closed).toBe(false);
      release.resolve();
      await closing;
      const execution = await running;
      expect(execution.status).toBe("success");
      expect((await host.executor.getExecution(execution.id))?.status).toBe("success");
    });
  });

  describe("validation", () => {
    const inputSchema = {
      type: "object",
      properties: { msg: { type: "string" }, count: { type: "integer", minimum: 1 } },
      required: ["msg"],
      additionalProperties: false,
    };

    it("fails with INPUT_INVALID without calling the handler, reporting Ajv's messages", async () => {
      const host = newHost();
      register(host, { name: "strict", schema: { input: inputSchema } });
      let calls = 0;
      host.executor.registerHandler("strict", () => {
        calls++;
        return "ran";
      });
      const execution = await host.executor.execute(
        "strict",
        { count: 0, extra: true },
        {
          retry: { maxAttempts: 3, initialDelayMs: 5, jitter: 0 },
        },
      );
      expect(calls).toBe(0);
      expect(execution.status).toBe("error");
      expect(execution.output).toBeNull();
      expect(execution.error?.code).toBe("INPUT_INVALID");
      expect(execution.error?.message).toContain("strict@1.0.0");
      expect(execution.error?.message).toContain("must have required property 'msg'");
      expect(execution.error?.message).toContain("input/count must be >= 1");
      expect(execution.error?.message).toContain("must NOT have additional properties");
      const violations = execution.error?.data as { keyword: string; instancePath: string }[];
      expect(violations.map((violation) => violation.keyword).sort()).toEqual([
        "additionalProperties",
        "minimum",
        "required",
      ]);
      const stored = await host.executor.getExecution(execution.id);
      expect(stored?.status).toBe("error");
      expect(stored?.error?.code).toBe("INPUT_INVALID");
      expect(stored?.input).toEqual({ count: 0, extra: true });
    });

    it("reports a wrong type in INPUT_INVALID", async () => {
      const host = newHost();
      register(host, { name: "strict", schema: { input: inputSchema } });
      host.executor.registerHandler("strict", () => "ran");
      const execution = await host.executor.execute("strict", { msg: 42 });
      expect(execution.error?.code).toBe("INPUT_INVALID");
      expect(execution.error?.message).toContain("input/msg must be string");
    });

    it("accepts input that matches the schema", async () => {
      const host = newHost();
      register(host, { name: "strict", schema: { input: inputSchema } });
      host.executor.registerHandler("strict", (input: { msg: string }) => input.msg.toUpperCase());
      const execution = await host.executor.execute("strict", { msg: "ok", count: 2 });
      expect(execution.status).toBe("success");
      expect(execution.output).toBe("OK");
    });

    it("fails with OUTPUT_INVALID when the output breaks the output schema, without retrying", async () => {
      const host = newHost();
      register(host, {
        name: "liar",
        schema: {
          input: {},
          output: { type: "object", properties: { echoed: { type: "string" } }, required: ["echoed"] },
        },
        retry: { maxAttempts: 3, initialDelayMs: 5, jitter: 0 },
      });
      let calls = 0;
      host.executor.registerHandler("liar", () => {
        calls++;
        return { echoed: 7 };
      });
      const execution = await host.executor.execute("liar", {});
      expect(calls).toBe(1);
      expect(execution.status).toBe("error");
      expect(execution.output).toBeNull();
      expect(execution.error?.code).toBe("OUTPUT_INVALID");
      expect(execution.error?.message).toContain("output/echoed must be string");
      expect((await host.executor.getExecution(execution.id))?.output).toBeNull();
    });
  });

  describe("handler failures", () => {
    it("fails with HANDLER_NOT_FOUND when no handler is registered under the skill's handler name", async () => {
      const host = newHost();
      register(host, { name: "orphan", handler: "nobodyRegisteredThis" });
      const execution = await host.executor.execute("orphan", {}, { retry: { maxAttempts: 3 } });
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("HANDLER_NOT_FOUND");
      expect(execution.error?.message).toContain("nobodyRegisteredThis");
      expect(execution.attempts).toBe(1);
      expect((await host.executor.getExecution(execution.id))?.error?.code).toBe("HANDLER_NOT_FOUND");
    });

    it("fails with RUNTIME_NOT_FOUND, without retrying, when the skill asks for a runtime the executor lacks", async () => {
      const host = newHost();
      register(host, {
        name: "exotic",
        runtime: "quantum",
        retry: { maxAttempts: 3, initialDelayMs: 5, jitter: 0 },
      });
      let calls = 0;
      host.executor.registerHandler("exotic", () => {
        calls++;
        return "ran";
      });
      const execution = await host.executor.execute("exotic", {});
      expect(calls).toBe(0);
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("RUNTIME_NOT_FOUND");
      expect(execution.error?.message).toContain('"quantum"');
      expect(execution.attempts).toBe(1);
    });

    it("runs a skill on a runtime registered with registerRuntime", async () => {
      const host = newHost();
      register(host, { name: "exotic", runtime: "quantum" });
      host.executor.registerHandler("exotic", (input: { n: number }) => input.n);
      host.executor.registerRuntime({
        name: "quantum",
        async run(request) {
          const handler = await request.resolveHandler();
          return { fromRuntime: await handler(request.input, request.context) };
        },
      });
      const execution = await host.executor.execute("exotic", { n: 3 });
      expect(execution.status).toBe("success");
      expect(execution.output).toEqual({ fromRuntime: 3 });
    });

    it("uses a handler resolver for handler references that are not registered names", async () => {
      const host = newHost();
      register(host, { name: "resolved", handler: "./index.js" });
      const remove = host.executor.addHandlerResolver((skill) =>
        skill.handler === "./index.js" ? () => "from resolver" : undefined,
      );
      expect((await host.executor.execute("resolved", {})).output).toBe("from resolver");
      remove();
      expect((await host.executor.execute("resolved", {})).error?.code).toBe("HANDLER_NOT_FOUND");
    });

    it("records a thrown Error as HANDLER_ERROR naming the skill", async () => {
      const host = newHost();
      register(host, { name: "broken" });
      host.executor.registerHandler("broken", () => {
        throw new TypeError("cannot read property of undefined");
      });
      const execution = await host.executor.execute("broken", {});
      expect(execution.status).toBe("error");
      expect(execution.output).toBeNull();
      expect(execution.error?.code).toBe("HANDLER_ERROR");
      expect(execution.error?.message).toBe("broken@1.0.0: cannot read property of undefined");
      expect(execution.error?.data).toMatchObject({ name: "TypeError" });
      const stored = await host.executor.getExecution(execution.id);
      expect(stored?.error).toMatchObject({
        code: "HANDLER_ERROR",
        message: "broken@1.0.0: cannot read property of undefined",
      });
    });

    it("records an async rejection as HANDLER_ERROR", async () => {
      const host = newHost();
      register(host, { name: "rejects" });
      host.executor.registerHandler("rejects", async () => {
        await Promise.resolve();
        throw new Error("upstream returned 502");
      });
      const execution = await host.executor.execute("rejects", {});
      expect(execution.error?.code).toBe("HANDLER_ERROR");
      expect(execution.error?.message).toContain("upstream returned 502");
    });

    it("records a thrown non-error value as HANDLER_ERROR", async () => {
      const host = newHost();
      register(host, { name: "throws-string" });
      host.executor.registerHandler("throws-string", () => {
        throw "just a string";
      });
      const execution = await host.executor.execute("throws-string", {});
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("HANDLER_ERROR");
      expect(execution.error?.message).toContain("just a string");
    });

    it("keeps the code and data of a SkillboxError thrown by the handler", async () => {
      const host = newHost();
      register(host, { name: "limited" });
      host.executor.registerHandler("limited", () => {
        throw new SkillboxError("RATE_LIMITED", "GitHub rate limit reached", { data: { retryAfter: 60 } });
      });
      const execution = await host.executor.execute("limited", {});
      expect(execution.status).toBe("error");
      expect(execution.error).toEqual({
        code: "RATE_LIMITED",
        message: "GitHub rate limit reached",
        data: { retryAfter: 60 },
      });
      expect((await host.executor.getExecution(execution.id))?.error).toEqual(execution.error);
    });
  });

  describe("timeouts", () => {
    it("times out a handler that ignores its signal and never settles, at the deadline, aborting ctx.signal", async () => {
      const host = newHost();
      register(host, { name: "hang", timeoutMs: 60 });
      let signal: AbortSignal | undefined;
      host.executor.registerHandler("hang", (_input, ctx) => {
        signal = ctx.signal;
        return never();
      });
      const started = performance.now();
      const execution = await host.executor.execute("hang", {});
      const elapsed = performance.now() - started;
      expect(execution.status).toBe("timeout");
      expect(execution.error?.code).toBe("TIMEOUT");
      expect(execution.error?.message).toContain("hang@1.0.0");
      expect(execution.error?.message).toContain("60 ms");
      expect(execution.output).toBeNull();
      expect(elapsed).toBeGreaterThanOrEqual(55);
      expect(elapsed).toBeLessThan(60 + 2_000);
      expect(signal?.aborted).toBe(true);
      expect((signal?.reason as SkillboxError | undefined)?.code).toBe("TIMEOUT");
      const stored = await host.executor.getExecution(execution.id);
      expect(stored?.status).toBe("timeout");
      expect(stored?.error?.code).toBe("TIMEOUT");
      expect(stored?.duration).toBeGreaterThanOrEqual(55);
    });

    it("discards the late result of a handler that resolves after its deadline", async () => {
      const host = newHost();
      register(host, { name: "late", timeoutMs: 50 });
      const finished = deferred();
      let abortedWhenFinishing: boolean | undefined;
      host.executor.registerHandler("late", async (_input, ctx) => {
        await sleep(3_000); // ignores ctx.signal on purpose
        abortedWhenFinishing = ctx.signal.aborted;
        finished.resolve();
        return { value: "too late" };
      });
      const started = performance.now();
      const execution = await host.executor.execute("late", {});
      // Resolved long before the handler's 3 s: the executor did not wait for it.
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(execution.status).toBe("timeout");
      expect(execution.output).toBeNull();
      await finished.promise;
      expect(abortedWhenFinishing).toBe(true);
      const stored = await host.executor.getExecution(execution.id);
      expect(stored?.status).toBe("timeout");
      expect(stored?.output).toBeNull();
      expect(execution.output).toBeNull();
    });

    it("ignores the late rejection of a timed-out handler", async () => {
      const host = newHost();
      register(host, { name: "late-failure", timeoutMs: 40 });
      const finished = deferred();
      host.executor.registerHandler("late-failure", async () => {
        await sleep(100);
        finished.resolve();
        throw new Error("failed after the deadline");
      });
      const execution = await host.executor.execute("late-failure", {});
      expect(execution.status).toBe("timeout");
      await finished.promise;
      await new Promise((resolve) => setImmediate(resolve));
      expect((await host.executor.getExecution(execution.id))?.error?.code).toBe("TIMEOUT");
    });

    it("uses the skill's timeoutMs when the call sets none", async () => {
      const host = newHost({ defaultTimeoutMs: 5_000 });
      register(host, { name: "short", timeoutMs: 50 });
      register(host, { name: "long", timeoutMs: 1_000 });
      host.executor.registerHandler("short", () => sleep(120).then(() => "short done"));
      host.executor.registerHandler("long", () => sleep(120).then(() => "long done"));
      expect((await host.executor.execute("short", {})).status).toBe("timeout");
      const long = await host.executor.execute("long", {});
      expect(long.status).toBe("success");
      expect(long.output).toBe("long done");
    });

    it("lets a per-call timeoutMs lower the skill's, never raise it", async () => {
      const host = newHost();
      register(host, { name: "patient", timeoutMs: 5_000 });
      register(host, { name: "impatient", timeoutMs: 50 });
      host.executor.registerHandler("patient", () => never());
      host.executor.registerHandler("impatient", () => sleep(120).then(() => "made it"));

      const started = performance.now();
      const shortened = await host.executor.execute("patient", {}, { timeoutMs: 60 });
      expect(shortened.status).toBe("timeout");
      expect(performance.now() - started).toBeLessThan(60 + 2_000);
      expect(shortened.error?.message).toContain("60 ms");

      const lengthened = await host.executor.execute("impatient", {}, { timeoutMs: 1_000 });
      expect(lengthened.status).toBe("timeout");
      expect(lengthened.error?.message).toContain("50 ms (the skill's timeoutMs)");
    });

    it("uses the host's defaultTimeoutMs when neither the skill nor the call sets one", async () => {
      const host = newHost({ defaultTimeoutMs: 50 });
      register(host, { name: "hang" });
      host.executor.registerHandler("hang", () => never());
      const execution = await host.executor.execute("hang", {});
      expect(execution.status).toBe("timeout");
      expect(execution.error?.message).toContain("50 ms");
    });

    it("caps an attempt at the overall totalTimeoutMs deadline", async () => {
      const host = newHost();
      register(host, { name: "hang", timeoutMs: 5_000 });
      host.executor.registerHandler("hang", () => never());
      const started = performance.now();
      const execution = await host.executor.execute(
        "hang",
        {},
        {
          totalTimeoutMs: 80,
          retry: { maxAttempts: 3, initialDelayMs: 5, jitter: 0 },
        },
      );
      const elapsed = performance.now() - started;
      expect(execution.status).toBe("timeout");
      expect(execution.error?.code).toBe("TIMEOUT");
      expect(execution.error?.message).toContain("overall deadline of 80 ms");
      expect(execution.attempts).toBe(1);
      expect(elapsed).toBeGreaterThanOrEqual(70);
      expect(elapsed).toBeLessThan(80 + 2_000);
    });

    it("bounds retries and their backoff by totalTimeoutMs", async () => {
      const host = newHost();
      register(host, { name: "slow-fail" });
      let calls = 0;
      host.executor.registerHandler("slow-fail", () => {
        calls++;
        return never();
      });
      const started = performance.now();
      const execution = await host.executor.execute(
        "slow-fail",
        {},
        {
          timeoutMs: 40,
          totalTimeoutMs: 150,
          retry: { maxAttempts: 50, initialDelayMs: 5, backoffCoefficient: 1, jitter: 0 },
        },
      );
      const elapsed = performance.now() - started;
      expect(execution.status).toBe("timeout");
      expect(execution.attempts).toBeGreaterThanOrEqual(2);
      expect(execution.attempts).toBeLessThan(50);
      expect(calls).toBe(execution.attempts);
      expect(elapsed).toBeLessThan(150 + 2_000);
      expect((await host.executor.getExecution(execution.id))?.attempts).toBe(execution.attempts);
    });

    it("stops retrying fast failures once the next backoff would pass totalTimeoutMs", async () => {
      const host = newHost();
      register(host, { name: "flaky" });
      let calls = 0;
      host.executor.registerHandler("flaky", () => {
        calls++;
        throw new Error("still down");
      });
      const started = performance.now();
      const execution = await host.executor.execute(
        "flaky",
        {},
        {
          totalTimeoutMs: 100,
          retry: { maxAttempts: 100, initialDelayMs: 30, backoffCoefficient: 1, jitter: 0 },
        },
      );
      const elapsed = performance.now() - started;
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("HANDLER_ERROR");
      expect(calls).toBeGreaterThanOrEqual(2);
      expect(calls).toBeLessThanOrEqual(4);
      expect(execution.attempts).toBe(calls);
      expect(elapsed).toBeLessThan(100 + 2_000);
    });

    it("retries an attempt that timed out and keeps the fresh result, not the stale one", async () => {
      const host = newHost();
      register(host, { name: "sometimes-slow", timeoutMs: 50 });
      const staleFinished = deferred();
      host.executor.registerHandler("sometimes-slow", async (_input, ctx) => {
        if (ctx.attempt === 1) {
          await sleep(120);
          staleFinished.resolve();
          return "stale";
        }
        return "fresh";
      });
      const execution = await host.executor.execute(
        "sometimes-slow",
        {},
        {
          retry: { maxAttempts: 3, initialDelayMs: 5, jitter: 0 },
        },
      );
      expect(execution.status).toBe("success");
      expect(execution.output).toBe("fresh");
      expect(execution.attempts).toBe(2);
      await staleFinished.promise;
      expect((await host.executor.getExecution(execution.id))?.output).toBe("fresh");
    });
  });

  describe("retries", () => {
    const retry = { maxAttempts: 3, initialDelayMs: 5, jitter: 0 };

    it("retries with exponential backoff until the handler succeeds and records the attempts", async () => {
      const host = newHost();
      register(host, { name: "flaky", retry });
      const attempts: { attempt: number; at: number }[] = [];
      host.executor.registerHandler("flaky", (_input, ctx) => {
        attempts.push({ attempt: ctx.attempt, at: performance.now() });
        if (ctx.attempt < 3) throw new Error(`failure ${ctx.attempt}`);
        return "third time lucky";
      });
      const execution = await host.executor.execute("flaky", {});
      expect(execution.status).toBe("success");
      expect(execution.output).toBe("third time lucky");
      expect(execution.error).toBeNull();
      expect(execution.attempts).toBe(3);
      expect(attempts.map((entry) => entry.attempt)).toEqual([1, 2, 3]);
      // 5 ms before the second attempt, 10 ms before the third (backoffCoefficient 2 by default).
      expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(4);
      expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(9);
      expect(await host.executor.getExecution(execution.id)).toMatchObject({
        status: "success",
        attempts: 3,
      });
    });

    it("gives up after maxAttempts and records the last error", async () => {
      const host = newHost();
      register(host, { name: "down" });
      let calls = 0;
      host.executor.registerHandler("down", (_input, ctx) => {
        calls++;
        throw new Error(`attempt ${ctx.attempt} failed`);
      });
      const execution = await host.executor.execute("down", {}, { retry });
      expect(calls).toBe(3);
      expect(execution.status).toBe("error");
      expect(execution.attempts).toBe(3);
      expect(execution.error?.message).toContain("attempt 3 failed");
      expect((await host.executor.getExecution(execution.id))?.attempts).toBe(3);
    });

    it("accepts the reference's maxRetries as retries after the first attempt", async () => {
      const host = newHost();
      register(host, { name: "down", retry: { initialDelayMs: 1, jitter: 0 } });
      let calls = 0;
      host.executor.registerHandler("down", () => {
        calls++;
        throw new Error("nope");
      });
      const execution = await host.executor.execute("down", {}, { maxRetries: 2 });
      expect(calls).toBe(3);
      expect(execution.attempts).toBe(3);
    });

    it("runs a single attempt by default", async () => {
      const host = newHost();
      register(host, { name: "down" });
      let calls = 0;
      host.executor.registerHandler("down", () => {
        calls++;
        throw new Error("nope");
      });
      const execution = await host.executor.execute("down", {});
      expect(calls).toBe(1);
      expect(execution.attempts).toBe(1);
    });

    it("lets the call's retry policy override the skill's", async () => {
      const host = newHost();
      register(host, { name: "down", retry: { maxAttempts: 5, initialDelayMs: 1, jitter: 0 } });
      let calls = 0;
      host.executor.registerHandler("down", () => {
        calls++;
        throw new Error("nope");
      });
      await host.executor.execute("down", {}, { retry: { maxAttempts: 2 } });
      expect(calls).toBe(2);
    });

    it.each([
      ["INPUT_INVALID", "error"],
      ["DENIED", "denied"],
      ["CANCELLED", "cancelled"],
    ] as const)("never retries %s thrown by a handler (status %s)", async (code, status) => {
      const host = newHost();
      register(host, { name: "refuses", retry });
      let calls = 0;
      host.executor.registerHandler("refuses", () => {
        calls++;
        throw new SkillboxError(code, `refused with ${code}`);
      });
      const execution = await host.executor.execute("refuses", {});
      expect(calls).toBe(1);
      expect(execution.attempts).toBe(1);
      expect(execution.status).toBe(status);
      expect(execution.error?.code).toBe(code);
      expect((await host.executor.getExecution(execution.id))?.status).toBe(status);
    });

    it("retries custom codes unless the policy lists them in nonRetryableCodes", async () => {
      const host = newHost();
      register(host, { name: "limited" });
      let calls = 0;
      host.executor.registerHandler("limited", () => {
        calls++;
        throw new SkillboxError("RATE_LIMITED", "slow down");
      });
      const retried = await host.executor.execute("limited", {}, { retry });
      expect(calls).toBe(3);
      expect(retried.attempts).toBe(3);
      expect(retried.error?.code).toBe("RATE_LIMITED");

      calls = 0;
      const notRetried = await host.executor.execute(
        "limited",
        {},
        {
          retry: { ...retry, nonRetryableCodes: ["RATE_LIMITED"] },
        },
      );
      expect(calls).toBe(1);
      expect(notRetried.attempts).toBe(1);
      expect(notRetried.error?.code).toBe("RATE_LIMITED");
    });

    it("does not retry a SkillboxError marked retryable: false", async () => {
      const host = newHost();
      register(host, { name: "fatal", retry });
      let calls = 0;
      host.executor.registerHandler("fatal", () => {
        calls++;
        throw new SkillboxError("SANDBOX_FAILED", "image missing", { retryable: false });
      });
      const execution = await host.executor.execute("fatal", {});
      expect(calls).toBe(1);
      expect(execution.error?.code).toBe("SANDBOX_FAILED");
    });
  });

  describe("cancellation", () => {
    const retry = { maxAttempts: 3, initialDelayMs: 5, jitter: 0 };

    it("cancels a running handler when the caller's signal aborts, aborting ctx.signal", async () => {
      const host = newHost();
      register(host, { name: "hang", timeoutMs: 10_000 });
      const started = deferred<AbortSignal>();
      host.executor.registerHandler("hang", (_input, ctx) => {
        started.resolve(ctx.signal);
        return never();
      });
      const controller = new AbortController();
      const pending = host.executor.execute("hang", {}, { signal: controller.signal, retry });
      const handlerSignal = await started.promise;
      const abortedAt = performance.now();
      controller.abort(new Error("user closed the tab"));
      const execution = await pending;
      expect(performance.now() - abortedAt).toBeLessThan(2_000);
      expect(execution.status).toBe("cancelled");
      expect(execution.error?.code).toBe("CANCELLED");
      expect(execution.attempts).toBe(1);
      expect(handlerSignal.aborted).toBe(true);
      expect((handlerSignal.reason as SkillboxError).code).toBe("CANCELLED");
      expect((await host.executor.getExecution(execution.id))?.status).toBe("cancelled");
    });

    it("cancels during a retry backoff without starting another attempt", async () => {
      const retrying = deferred();
      const logger: SkillLogger = {
        debug(message) {
          if (message === "retrying") retrying.resolve();
        },
        info() {},
        warn() {},
        error() {},
      };
      const host = newHost({ logger });
      register(host, { name: "flaky" });
      let calls = 0;
      host.executor.registerHandler("flaky", () => {
        calls++;
        throw new Error("transient");
      });
      const controller = new AbortController();
      const started = performance.now();
      const pending = host.executor.execute(
        "flaky",
        {},
        {
          signal: controller.signal,
          retry: { maxAttempts: 3, initialDelayMs: 10_000, jitter: 0 },
        },
      );
      await retrying.promise;
      controller.abort();
      const execution = await pending;
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(calls).toBe(1);
      expect(execution.status).toBe("cancelled");
      expect(execution.error?.code).toBe("CANCELLED");
      expect(execution.attempts).toBe(1);
      expect((await host.executor.getExecution(execution.id))?.status).toBe("cancelled");
    });

    it("records a call whose signal is already aborted as cancelled without running the handler", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      let calls = 0;
      host.executor.registerHandler("echo", () => {
        calls++;
        return 1;
      });
      const execution = await host.executor.execute("echo", {}, { signal: AbortSignal.abort() });
      expect(calls).toBe(0);
      expect(execution.status).toBe("cancelled");
      expect((await host.executor.getExecution(execution.id))?.status).toBe("cancelled");
    });
  });

  describe("idempotency", () => {
    it("returns the stored execution for a second call with the same key and owner without running the handler", async () => {
      const host = newHost();
      register(host, { name: "charge" });
      let calls = 0;
      host.executor.registerHandler("charge", (input: { amount: number }) => {
        calls++;
        return { charged: input.amount, call: calls };
      });
      const first = await host.executor.execute(
        "charge",
        { amount: 10 },
        { apiKeyId: "shop", idempotencyKey: "order-1" },
      );
      const second = await host.executor.execute(
        "charge",
        { amount: 10 },
        { apiKeyId: "shop", idempotencyKey: "order-1" },
      );
      expect(calls).toBe(1);
      expect(second.id).toBe(first.id);
      expect(second.status).toBe("success");
      expect(second.output).toEqual({ charged: 10, call: 1 });
      expect(second.idempotencyKey).toBe("order-1");
      expect(await host.executor.countExecutions()).toBe(1);
    });

    it("returns a stored failure too, without retrying it", async () => {
      const host = newHost();
      register(host, { name: "fails" });
      let calls = 0;
      host.executor.registerHandler("fails", () => {
        calls++;
        throw new Error("boom");
      });
      const first = await host.executor.execute("fails", {}, { idempotencyKey: "k" });
      const second = await host.executor.execute("fails", {}, { idempotencyKey: "k" });
      expect(calls).toBe(1);
      expect(second.id).toBe(first.id);
      expect(second.status).toBe("error");
      expect(second.error?.code).toBe("HANDLER_ERROR");
    });

    it("runs again for a different owner using the same key", async () => {
      const host = newHost();
      register(host, { name: "charge" });
      let calls = 0;
      host.executor.registerHandler("charge", () => ++calls);
      const a = await host.executor.execute("charge", {}, { apiKeyId: "tenant-a", idempotencyKey: "same" });
      const b = await host.executor.execute("charge", {}, { apiKeyId: "tenant-b", idempotencyKey: "same" });
      expect(calls).toBe(2);
      expect(b.id).not.toBe(a.id);
      expect(a.output).toBe(1);
      expect(b.output).toBe(2);
      expect(await host.executor.countExecutions()).toBe(2);
    });

    it("runs the handler once for concurrent duplicates with the same key", async () => {
      const host = newHost();
      register(host, { name: "charge" });
      let calls = 0;
      const release = deferred();
      host.executor.registerHandler("charge", async () => {
        calls++;
        await release.promise;
        return "charged once";
      });
      const pending = Promise.all(
        Array.from({ length: 5 }, () =>
          host.executor.execute("charge", {}, { apiKeyId: "shop", idempotencyKey: "order-2" }),
        ),
      );
      release.resolve();
      const executions = await pending;
      expect(calls).toBe(1);
      expect(new Set(executions.map((execution) => execution.id)).size).toBe(1);
      for (const execution of executions) {
        expect(execution.status).toBe("success");
        expect(execution.output).toBe("charged once");
      }
      expect(await host.executor.countExecutions()).toBe(1);
    });

    it("throws IDEMPOTENCY_CONFLICT when the key was used for another skill", async () => {
      const host = newHost();
      register(host, { name: "charge" });
      register(host, { name: "refund" });
      let refunds = 0;
      host.executor.registerHandler("charge", () => "charged");
      host.executor.registerHandler("refund", () => ++refunds);
      const first = await host.executor.execute("charge", {}, { idempotencyKey: "k-1" });
      const error = await rejection(
        host.executor.execute("refund", {}, { idempotencyKey: "k-1" }),
        "IDEMPOTENCY_CONFLICT",
      );
      expect(error.message).toContain("k-1");
      expect(error.data).toEqual({ executionId: first.id });
      expect(refunds).toBe(0);
      expect(await host.executor.countExecutions()).toBe(1);
    });

    it("throws IDEMPOTENCY_CONFLICT for another skill while the first is still in flight", async () => {
      const host = newHost();
      register(host, { name: "charge" });
      register(host, { name: "refund" });
      const release = deferred();
      host.executor.registerHandler("charge", async () => {
        await release.promise;
        return "charged";
      });
      host.executor.registerHandler("refund", () => "refunded");
      const first = host.executor.execute("charge", {}, { idempotencyKey: "k-2" });
      const conflicting = host.executor.execute("refund", {}, { idempotencyKey: "k-2" });
      release.resolve();
      await rejection(conflicting, "IDEMPOTENCY_CONFLICT");
      expect((await first).status).toBe("success");
    });

    it("waits for an execution with the same key started by another host on the same database", async () => {
      const host = newHost();
      const other = createSkillHost({
        database: host.databasePath,
        logger: { debug() {}, info() {}, warn() {}, error() {} },
      });
      newHost.track(other);
      register(host, { name: "charge" });
      const started = deferred();
      const release = deferred();
      let firstCalls = 0;
      let secondCalls = 0;
      host.executor.registerHandler("charge", async () => {
        firstCalls++;
        started.resolve();
        await release.promise;
        return "charged by the first host";
      });
      other.executor.registerHandler("charge", () => {
        secondCalls++;
        return "charged by the second host";
      });
      const first = host.executor.execute("charge", {}, { idempotencyKey: "shared" });
      await started.promise;
      const second = other.executor.execute("charge", {}, { idempotencyKey: "shared" });
      release.resolve();
      const [a, b] = await Promise.all([first, second]);
      expect(firstCalls).toBe(1);
      expect(secondCalls).toBe(0);
      expect(b.id).toBe(a.id);
      expect(b.status).toBe("success");
      expect(b.output).toBe("charged by the first host");
    });
  });

  describe("ctx.call", () => {
    it("runs a nested execution recorded with its parent, owner and session", async () => {
      const host = newHost();
      register(host, { name: "outer" });
      register(host, { name: "inner" });
      host.executor.registerHandler("inner", (input: { n: number }) => input.n * 2);
      host.executor.registerHandler("outer", async (input: { n: number }, ctx) => {
        const doubled = await ctx.call<number>("inner@^1.0.0", { n: input.n });
        return doubled + 1;
      });
      const outer = await host.executor.execute("outer", { n: 20 }, { apiKeyId: "me", sessionId: "s" });
      expect(outer.status).toBe("success");
      expect(outer.output).toBe(41);
      const children = await host.executor.listExecutions({ parentExecutionId: outer.id });
      expect(children).toHaveLength(1);
      expect(children[0]).toMatchObject({
        skillName: "inner",
        parentExecutionId: outer.id,
        apiKeyId: "me",
        sessionId: "s",
        input: { n: 20 },
        output: 40,
        status: "success",
      });
      expect((await host.executor.getExecution(outer.id))?.parentExecutionId).toBeNull();
    });

    it("propagates the nested failure's code to the parent", async () => {
      const host = newHost();
      register(host, { name: "outer" });
      register(host, { name: "inner" });
      host.executor.registerHandler("inner", () => {
        throw new SkillboxError("RATE_LIMITED", "inner is rate limited");
      });
      host.executor.registerHandler("outer", (_input, ctx) => ctx.call("inner", {}));
      const outer = await host.executor.execute("outer", {});
      expect(outer.status).toBe("error");
      expect(outer.error?.code).toBe("RATE_LIMITED");
      expect(outer.error?.message).toBe("inner is rate limited");
      const [inner] = await host.executor.listExecutions({ skill: "inner" });
      expect(inner?.parentExecutionId).toBe(outer.id);
      expect(inner?.error?.code).toBe("RATE_LIMITED");
      expect(outer.error?.data).toMatchObject({ executionId: inner?.id });
    });

    it("propagates SKILL_NOT_FOUND for a nested call to an unknown skill", async () => {
      const host = newHost();
      register(host, { name: "outer" });
      host.executor.registerHandler("outer", (_input, ctx) => ctx.call("nowhere", {}));
      const outer = await host.executor.execute("outer", {});
      expect(outer.status).toBe("error");
      expect(outer.error?.code).toBe("SKILL_NOT_FOUND");
      expect(await host.executor.countExecutions()).toBe(1);
    });

    it("lets the parent catch a nested failure and carry on", async () => {
      const host = newHost();
      register(host, { name: "outer" });
      register(host, { name: "inner", schema: { input: { type: "object", required: ["x"] } } });
      host.executor.registerHandler("inner", () => "unreachable");
      host.executor.registerHandler("outer", async (_input, ctx) => {
        try {
          return await ctx.call("inner", {});
        } catch (error) {
          return `caught ${(error as SkillboxError).code}`;
        }
      });
      const outer = await host.executor.execute("outer", {});
      expect(outer.status).toBe("success");
      expect(outer.output).toBe("caught INPUT_INVALID");
    });

    it("cancels the nested execution when the parent's attempt times out", async () => {
      const host = newHost();
      register(host, { name: "outer", timeoutMs: 60 });
      register(host, { name: "inner", timeoutMs: 10_000 });
      const innerSignal = deferred<AbortSignal>();
      host.executor.registerHandler("inner", (_input, ctx) => {
        innerSignal.resolve(ctx.signal);
        return never();
      });
      host.executor.registerHandler("outer", (_input, ctx) => ctx.call("inner", {}));
      const outer = await host.executor.execute("outer", {});
      expect(outer.status).toBe("timeout");
      expect((await innerSignal.promise).aborted).toBe(true);
      await host.executor.close();
      const [inner] = await host.executor.listExecutions({ skill: "inner" });
      expect(inner?.status).toBe("cancelled");
      expect(inner?.parentExecutionId).toBe(outer.id);
    });

    it("fails a self-recursive skill with CALL_DEPTH_EXCEEDED at maxCallDepth", async () => {
      const host = newHost({ maxCallDepth: 3 });
      register(host, { name: "recurse" });
      let calls = 0;
      host.executor.registerHandler("recurse", (input: { depth: number }, ctx) => {
        calls++;
        return ctx.call("recurse", { depth: input.depth + 1 });
      });
      const root = await host.executor.execute("recurse", { depth: 0 });
      expect(root.status).toBe("error");
      expect(root.error?.code).toBe("CALL_DEPTH_EXCEEDED");
      expect(calls).toBe(4);
      expect(await host.executor.countExecutions()).toBe(4);
      const rows = await host.executor.listExecutions({ skill: "recurse" });
      expect(rows.every((row) => row.status === "error" && row.error?.code === "CALL_DEPTH_EXCEEDED")).toBe(
        true,
      );
      const deepest = rows.find((row) => (row.input as { depth: number }).depth === 3);
      expect(deepest?.error?.message).toContain("limit 3");
      // Every row but the root has the row one level up as its parent.
      const byDepth = new Map(rows.map((row) => [(row.input as { depth: number }).depth, row]));
      for (let depth = 1; depth <= 3; depth++) {
        expect(byDepth.get(depth)?.parentExecutionId).toBe(byDepth.get(depth - 1)?.id);
      }
    });

    it("limits self-recursion at the default depth of 16", async () => {
      const host = newHost();
      register(host, { name: "recurse" });
      host.executor.registerHandler("recurse", (input: { depth: number }, ctx) =>
        ctx.call("recurse", { depth: input.depth + 1 }),
      );
      const root = await host.executor.execute("recurse", { depth: 0 });
      expect(root.error?.code).toBe("CALL_DEPTH_EXCEEDED");
      expect(await host.executor.countExecutions()).toBe(17);
    });
  });

  describe("events", () => {
    it("emits started with the committed running row and finished with the committed final row", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      host.executor.registerHandler("echo", (input) => input);
      type Seen = { event: SkillExecution; stored: SkillExecution | undefined };
      const startedReads: Promise<Seen>[] = [];
      const finishedReads: Promise<Seen>[] = [];
      // Each read starts inside the listener: what it answers is the row as it stood at the emit.
      const readBack = (reads: Promise<Seen>[]) => (execution: SkillExecution) => {
        reads.push(host.executor.getExecution(execution.id).then((stored) => ({ event: execution, stored })));
      };
      host.executor.on("started", readBack(startedReads));
      host.executor.on("finished", readBack(finishedReads));
      const execution = await host.executor.execute("echo", { a: 1 }, { apiKeyId: "me" });
      const started = await Promise.all(startedReads);
      const finished = await Promise.all(finishedReads);
      expect(started).toHaveLength(1);
      expect(started[0]!.event).toMatchObject({
        id: execution.id,
        status: "running",
        apiKeyId: "me",
        input: { a: 1 },
      });
      expect(started[0]!.stored?.status).toBe("running");
      expect(finished).toHaveLength(1);
      expect(finished[0]!.event).toMatchObject({ id: execution.id, status: "success", output: { a: 1 } });
      expect(finished[0]!.stored?.status).toBe("success");
    });

    it("emits finished for failures too", async () => {
      const host = newHost();
      register(host, { name: "broken" });
      host.executor.registerHandler("broken", () => {
        throw new Error("nope");
      });
      const finished = new Promise<SkillExecution>((resolve) => host.executor.once("finished", resolve));
      const execution = await host.executor.execute("broken", {});
      const event = await finished;
      expect(event.id).toBe(execution.id);
      expect(event.status).toBe("error");
      expect(event.error?.code).toBe("HANDLER_ERROR");
    });
  });

  describe("ctx.call with requires", () => {
    it("reaches only declared dependencies, within the declared range", async () => {
      const host = newHost();
      register(host, { name: "dep", version: "1.4.0", handler: "dep" });
      register(host, { name: "dep", version: "2.0.0", handler: "dep" });
      register(host, { name: "other" });
      register(host, { name: "caller", requires: { dep: "^1.2.0" } });
      host.executor.registerHandler("dep", (_input, ctx) => ctx.skill.version);
      host.executor.registerHandler("other", () => "other");
      const outcomes: Record<string, unknown> = {};
      host.executor.registerHandler("caller", async (_input, ctx) => {
        for (const reference of ["dep", "dep@2.0.0", "other"]) {
          try {
            outcomes[reference] = await ctx.call(reference, {});
          } catch (error) {
            outcomes[reference] = (error as SkillboxError).code;
          }
        }
        return null;
      });
      await host.executor.execute("caller", {});
      expect(outcomes).toEqual({
        dep: "1.4.0",
        "dep@2.0.0": "UNDECLARED_DEPENDENCY",
        other: "UNDECLARED_DEPENDENCY",
      });
    });
  });

  describe("regressions", () => {
    // A throwing `started` observer used to reject execute() and leave the row `running`.
    it("keeps running and recording when an event listener throws", async () => {
      const errors: string[] = [];
      const logger: SkillLogger = {
        debug() {},
        info() {},
        warn() {},
        error: (message) => errors.push(message),
      };
      const host = newHost({ logger });
      register(host, { name: "echo" });
      host.executor.registerHandler("echo", (input) => input);
      host.executor.on("started", () => {
        throw new Error("observer bug");
      });
      const execution = await host.executor.execute("echo", { a: 1 });
      expect(execution.status).toBe("success");
      expect((await host.executor.getExecution(execution.id))?.status).toBe("success");
      expect(errors).toEqual(['A "started" listener threw']);
    });

    // ctx.call used to spread array data into an object ({ executionId, "0": … }).
    it("keeps a nested failure's data intact under `details`", async () => {
      const host = newHost();
      register(host, {
        name: "strict",
        schema: { input: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } },
      });
      register(host, { name: "caller" });
      host.executor.registerHandler("strict", (input) => input);
      let caught: SkillboxError | undefined;
      host.executor.registerHandler("caller", async (_input, ctx) => {
        try {
          await ctx.call("strict", { n: "not a number" });
        } catch (error) {
          caught = error as SkillboxError;
        }
        return null;
      });
      await host.executor.execute("caller", {});
      expect(caught?.code).toBe("INPUT_INVALID");
      const data = caught?.data as { executionId: string; details: unknown };
      expect(Array.isArray(data.details)).toBe(true);
      expect((await host.executor.getExecution(data.executionId))?.error?.code).toBe("INPUT_INVALID");
    });

    // Ids were minted from pooled random bytes, which turned off uuid's in-millisecond ordering.
    it("mints execution ids that sort in creation order", async () => {
      const host = newHost();
      register(host, { name: "echo" });
      host.executor.registerHandler("echo", (input) => input);
      const ids: string[] = [];
      for (let index = 0; index < 300; index++) ids.push((await host.executor.execute("echo", index)).id);
      expect([...ids].sort()).toEqual(ids);
    });
  });

  describe("listExecutions", () => {
    async function seed(host: TemporaryHost) {
      register(host, { name: "alpha" });
      register(host, { name: "beta" });
      host.executor.registerHandler("alpha", (input: { n: number }) => input.n);
      host.executor.registerHandler("beta", (input: { n: number }) => {
        if (input.n % 2 === 1) throw new Error("odd");
        return input.n;
      });
      const early: SkillExecution[] = [];
      for (let n = 0; n < 3; n++) early.push(await host.executor.execute("alpha", { n }, { apiKeyId: "a" }));
      for (let n = 0; n < 4; n++) early.push(await host.executor.execute("beta", { n }, { apiKeyId: "b" }));
      await clockPast(Math.max(...early.map((execution) => Date.parse(execution.createdAt))));
      const since = new Date();
      const late: SkillExecution[] = [];
      for (let n = 3; n < 5; n++) late.push(await host.executor.execute("alpha", { n }, { apiKeyId: "a" }));
      return { early, late, since };
    }

    it("lists newest first and filters by owner, skill, status and since", async () => {
      const host = newHost();
      const { late, since } = await seed(host);
      const all = await host.executor.listExecutions();
      expect(all).toHaveLength(9);
      expect(all[0]!.id).toBe(late[1]!.id);
      expect(all.map((execution) => Date.parse(execution.createdAt))).toEqual(
        [...all.map((execution) => Date.parse(execution.createdAt))].sort((x, y) => y - x),
      );

      const ownedByA = await host.executor.listExecutions({ owner: "a" });
      expect(ownedByA).toHaveLength(5);
      expect(ownedByA.every((execution) => execution.apiKeyId === "a")).toBe(true);

      const beta = await host.executor.listExecutions({ skill: "beta" });
      expect(beta.map((execution) => execution.input)).toEqual([{ n: 3 }, { n: 2 }, { n: 1 }, { n: 0 }]);

      const failed = await host.executor.listExecutions({ status: "error" });
      expect(failed).toHaveLength(2);
      expect(failed.every((execution) => execution.skillName === "beta")).toBe(true);
      expect(await host.executor.listExecutions({ status: ["error", "success"] })).toHaveLength(9);
      expect(await host.executor.listExecutions({ status: [] })).toHaveLength(0);

      const recent = await host.executor.listExecutions({ since });
      expect(recent.map((execution) => execution.id)).toEqual([late[1]!.id, late[0]!.id]);
      expect(await host.executor.listExecutions({ since: since.toISOString() })).toHaveLength(2);
      expect(await host.executor.listExecutions({ since: since.getTime() })).toHaveLength(2);

      expect(
        await host.executor.listExecutions({ owner: "b", skill: "beta", status: "success" }),
      ).toHaveLength(2);
      expect(await host.executor.listExecutions({ owner: "a", skill: "beta" })).toHaveLength(0);
    });

    it("paginates with limit and offset", async () => {
      const host = newHost();
      await seed(host);
      const alpha = await host.executor.listExecutions({ skill: "alpha" });
      expect(alpha.map((execution) => (execution.input as { n: number }).n)).toEqual([4, 3, 2, 1, 0]);
      const page = await host.executor.listExecutions({ skill: "alpha", limit: 2, offset: 1 });
      expect(page.map((execution) => (execution.input as { n: number }).n)).toEqual([3, 2]);
      const last = await host.executor.listExecutions({ skill: "alpha", limit: 2, offset: 4 });
      expect(last.map((execution) => (execution.input as { n: number }).n)).toEqual([0]);
      expect(await host.executor.listExecutions({ skill: "alpha", offset: 10 })).toEqual([]);
    });

    it("orders executions started within the same millisecond newest first", async () => {
      const host = newHost();
      register(host, { name: "tick" });
      host.executor.registerHandler("tick", (input: { n: number }) => input.n);
      const executions: SkillExecution[] = [];
      for (let n = 0; n < 40; n++) executions.push(await host.executor.execute("tick", { n }));
      const sameMillisecond = executions.filter(
        (execution, index) => index > 0 && execution.createdAt === executions[index - 1]!.createdAt,
      ).length;
      expect(sameMillisecond).toBeGreaterThan(0);
      const listed = await host.executor.listExecutions({ skill: "tick", limit: 100 });
      expect(listed.map((execution) => (execution.input as { n: number }).n)).toEqual(
        Array.from({ length: 40 }, (_, index) => 39 - index),
      );
    });

    it("rejects a since that is not a date with INPUT_INVALID", async () => {
      const host = newHost();
      try {
        await host.executor.listExecutions({ since: "yesterday-ish" });
        expect.unreachable();
      } catch (error) {
        expect((error as SkillboxError).code).toBe("INPUT_INVALID");
      }
    });
  });

  describe("countExecutions", () => {
    it("counts the rows matching the filters, ignoring pagination", async () => {
      const host = newHost();
      register(host, { name: "alpha" });
      register(host, { name: "beta" });
      host.executor.registerHandler("alpha", () => "a");
      host.executor.registerHandler("beta", () => {
        throw new Error("b");
      });
      expect(await host.executor.countExecutions()).toBe(0);
      for (let index = 0; index < 4; index++) await host.executor.execute("alpha", {}, { apiKeyId: "x" });
      for (let index = 0; index < 3; index++) await host.executor.execute("beta", {}, { apiKeyId: "y" });
      expect(await host.executor.countExecutions()).toBe(7);
      expect(await host.executor.countExecutions({ owner: "x" })).toBe(4);
      expect(await host.executor.countExecutions({ skill: "beta" })).toBe(3);
      expect(await host.executor.countExecutions({ status: "error" })).toBe(3);
      expect(await host.executor.countExecutions({ status: "success", owner: "y" })).toBe(0);
      expect(await host.executor.countExecutions({ limit: 1, offset: 5 })).toBe(7);
      expect(await host.executor.countExecutions({ since: Date.now() + 60_000 })).toBe(0);
    });
  });
});

describe("retryDelay", () => {
  const policy = {
    ...DEFAULT_RETRY_POLICY,
    initialDelayMs: 100,
    backoffCoefficient: 2,
    maxDelayMs: 1_000,
    jitter: 0,
  };

  it("grows exponentially from initialDelayMs and stops at maxDelayMs", () => {
    expect([1, 2, 3, 4, 5, 6].map((attempt) => retryDelay(policy, attempt))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
  });

  it("spreads the delay by at most ±jitter", () => {
    const jittered = { ...policy, jitter: 0.2 };
    expect(retryDelay(jittered, 1, () => 0)).toBe(80);
    expect(retryDelay(jittered, 1, () => 0.5)).toBe(100);
    expect(retryDelay(jittered, 1, () => 0.999_999)).toBe(120);
  });

  it("makes a single attempt by default", () => {
    expect(DEFAULT_RETRY_POLICY.maxAttempts).toBe(1);
  });
});
