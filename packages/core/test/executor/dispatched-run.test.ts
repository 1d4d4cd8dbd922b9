import { existsSync, readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import {
  type DispatchedRunOutcome,
  type DispatchedRunRequest,
  defineInterceptor,
  deny,
  type ExecutionApproval,
  type ExecutionProgress,
  type InterceptorContext,
  type Skill,
  SkillboxError,
  type SkillContext,
  type SkillHost,
} from "@skillbox/core";
import { createWorkerRuntime } from "@skillbox/core/internal";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../runtime/worker-fixture.js";
import { deferred, registerSkill, useTemporaryHosts } from "./executor-test-bed.js";

const newHost = useTemporaryHosts();

/** Ids as another host's record would mint them (any string the record holds). */
let nextId = 0;
function executionId(): string {
  nextId += 1;
  return `0190f000-0000-7000-8000-${String(nextId).padStart(12, "0")}`;
}

/** A dispatched request for `skill` with what a fresh claim carries; `fields` override. */
function dispatched(skill: Skill, fields: Partial<DispatchedRunRequest> = {}): DispatchedRunRequest {
  return {
    executionId: executionId(),
    skill,
    input: {},
    apiKeyId: "public",
    sessionId: null,
    parentExecutionId: null,
    idempotencyKey: null,
    options: {},
    attemptsSoFar: 0,
    approval: null,
    createdAt: Date.now(),
    signal: new AbortController().signal,
    ...fields,
  };
}

function count(host: SkillHost, table: string): number {
  return host.database.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
}

function final(outcome: DispatchedRunOutcome): Extract<DispatchedRunOutcome, { kind: "final" }> {
  if (outcome.kind !== "final") throw new Error(`expected a final outcome, got ${JSON.stringify(outcome)}`);
  return outcome;
}

/** What the executor keeps per run in memory, read through its private fields. */
interface ExecutorInsides {
  services: { running: { slots: unknown[]; free: number[] } };
  active: { size: number };
  durable: { hub: { byId: Map<string, unknown> } };
}

function insides(host: SkillHost): { running: number; slots: number; active: number; followed: number } {
  const executor = host.executor as unknown as ExecutorInsides;
  const { slots } = executor.services.running;
  return {
    running: slots.filter((slot) => slot !== undefined).length,
    slots: slots.length,
    active: executor.active.size,
    followed: executor.durable.hub.byId.size,
  };
}

describe("SkillExecutor.runDispatched", () => {
  it("runs the handler with the given execution id and attempt, and records nothing locally", async () => {
    const host = newHost();
    const skill = registerSkill(host, {
      name: "greet",
      input: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      output: { type: "object", properties: { greeting: { type: "string" } }, required: ["greeting"] },
    });
    const seen: { executionId: string; attempt: number; apiKeyId: string; sessionId: string | null }[] = [];
    host.executor.registerHandler("greet", (input: { name: string }, ctx: SkillContext) => {
      seen.push({
        executionId: ctx.executionId,
        attempt: ctx.attempt,
        apiKeyId: ctx.apiKeyId,
        sessionId: ctx.sessionId,
      });
      return { greeting: `hello ${input.name}` };
    });
    const started: unknown[] = [];
    host.executor.on("started", (execution) => started.push(execution));
    host.executor.on("finished", (execution) => started.push(execution));
    const request = dispatched(skill, {
      input: { name: "ada" },
      apiKeyId: "team-a",
      sessionId: "session-1",
      attemptsSoFar: 2,
    });

    const outcome = final(await host.executor.runDispatched(request));

    expect(outcome).toMatchObject({
      status: "success",
      output: { greeting: "hello ada" },
      outputJson: JSON.stringify({ greeting: "hello ada" }),
      error: null,
      attempts: 3,
    });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(0);
    expect(seen).toEqual([
      { executionId: request.executionId, attempt: 3, apiKeyId: "team-a", sessionId: "session-1" },
    ]);
    expect(await host.executor.getExecution(request.executionId)).toBeUndefined();
    expect(count(host, "skill_executions")).toBe(0);
    // The executor's listeners speak of its own audit trail, which this run is not in.
    expect(started).toEqual([]);
  });

  it("ends with INPUT_INVALID when the input breaks the schema, without running the handler", async () => {
    const host = newHost();
    const skill = registerSkill(host, {
      name: "strict",
      input: { type: "object", properties: { count: { type: "integer" } }, required: ["count"] },
    });
    let ran = false;
    host.executor.registerHandler("strict", () => {
      ran = true;
      return {};
    });
    const outcome = final(await host.executor.runDispatched(dispatched(skill, { input: { count: "many" } })));
    expect(outcome.status).toBe("error");
    expect(outcome.error?.code).toBe("INPUT_INVALID");
    expect(outcome.output).toBeNull();
    expect(ran).toBe(false);
  });

  it("retries with the call's policy, counting attempts on from the earlier claims'", async () => {
    const host = newHost();
    const skill = registerSkill(host, { name: "flaky" });
    const attempts: number[] = [];
    host.executor.registerHandler("flaky", (_input, ctx: SkillContext) => {
      attempts.push(ctx.attempt);
      if (attempts.length < 3) throw new Error(`failure ${attempts.length}`);
      return { ok: true };
    });
    const outcome = final(
      await host.executor.runDispatched(
        dispatched(skill, {
          attemptsSoFar: 1,
          options: { maxRetries: 2, retry: { initialDelayMs: 1, jitter: 0 } },
        }),
      ),
    );
    expect(attempts).toEqual([2, 3, 4]);
    expect(outcome).toMatchObject({ status: "success", output: { ok: true }, attempts: 4 });

    attempts.length = 0;
    const exhausted = final(
      await host.executor.runDispatched(
        dispatched(skill, { attemptsSoFar: 5, options: { maxRetries: 1, retry: { initialDelayMs: 1 } } }),
      ),
    );
    expect(attempts).toEqual([6, 7]);
    expect(exhausted).toMatchObject({ status: "error", attempts: 7, error: { code: "HANDLER_ERROR" } });
  });

  it("stops a cooperative handler when its signal aborts: cancelled, or timeout for a deadline", async () => {
    const host = newHost();
    const skill = registerSkill(host, { name: "patient" });
    let entered = deferred();
    let handlerSignal: AbortSignal | undefined;
    host.executor.registerHandler("patient", (_input, ctx: SkillContext) => {
      handlerSignal = ctx.signal;
      entered.resolve();
      return new Promise((_resolve, reject) =>
        ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)),
      );
    });

    const cancel = new AbortController();
    const cancelled = host.executor.runDispatched(dispatched(skill, { signal: cancel.signal }));
    await entered.promise;
    cancel.abort(new Error("cancelled on host api-1"));
    const outcome = final(await cancelled);
    expect(outcome.status).toBe("cancelled");
    expect(outcome.error?.code).toBe("CANCELLED");
    expect(outcome.error?.message).toContain("cancelled on host api-1");
    expect(handlerSignal?.aborted).toBe(true);

    entered = deferred();
    const deadline = new AbortController();
    const late = host.executor.runDispatched(dispatched(skill, { signal: deadline.signal }));
    await entered.promise;
    deadline.abort(new SkillboxError("DEADLINE_EXCEEDED", "the execution's deadline passed"));
    const timedOut = final(await late);
    expect(timedOut.status).toBe("timeout");
    expect(timedOut.error?.code).toBe("TIMEOUT");
    expect(timedOut.error?.message).toContain("deadline passed");

    // Aborted before it starts: the handler never runs (the attempt that found the signal aborted counts, as on one host).
    entered = deferred();
    handlerSignal = undefined;
    const early = final(
      await host.executor.runDispatched(dispatched(skill, { signal: AbortSignal.abort("lease lost") })),
    );
    expect(early).toMatchObject({ status: "cancelled", attempts: 1, error: { code: "CANCELLED" } });
    expect(early.error?.message).toContain("lease lost");
    expect(handlerSignal).toBeUndefined();
  });

  it("times an attempt out at the call's timeoutMs", async () => {
    const host = newHost();
    const skill = registerSkill(host, { name: "slow" });
    host.executor.registerHandler("slow", (_input, ctx: SkillContext) => {
      return new Promise((_resolve, reject) =>
        ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)),
      );
    });
    const outcome = final(
      await host.executor.runDispatched(dispatched(skill, { options: { timeoutMs: 50 } })),
    );
    expect(outcome).toMatchObject({ status: "timeout", attempts: 1, error: { code: "TIMEOUT" } });
    expect(outcome.error?.message).toContain("attempt 1 timed out after 50 ms");
  });

  it("runs interceptors as on one host, with the same arguments in the same order, and a denial ends it denied", async () => {
    const host = newHost();
    const skill = registerSkill(host, { name: "echo", input: { type: "object" } });
    host.executor.registerHandler("echo", (input: { text: string }) => ({ text: input.text }));
    const calls: unknown[] = [];
    const view = (context: InterceptorContext) => ({
      input: context.input,
      apiKeyId: context.apiKeyId,
      sessionId: context.sessionId,
      parentExecutionId: context.parentExecutionId,
      approval: context.approval,
    });
    host.executor.use(
      defineInterceptor({
        name: "outer",
        before: (context) => {
          calls.push(["outer.before", view(context)]);
          return { input: { text: `${(context.input as { text: string }).text}!` } };
        },
        after: (context, result) => {
          calls.push(["outer.after", view(context), result.output, result.attempts]);
          return { output: { ...(result.output as object), wrapped: true } };
        },
        onFinish: (_context, execution) => {
          calls.push(["outer.onFinish", execution.status, execution.output]);
        },
      }),
    );
    host.executor.use(
      defineInterceptor({
        name: "guard",
        before: (context) => {
          calls.push(["guard.before", view(context)]);
          if ((context.input as { text: string }).text.startsWith("forbidden")) throw deny("not that");
        },
        onError: (_context, error) => {
          calls.push(["guard.onError", error.code]);
        },
      }),
    );

    const local = await host.executor.execute("echo", { text: "hi" }, { sessionId: "s" });
    const localCalls = calls.splice(0);
    const outcome = final(
      await host.executor.runDispatched(dispatched(skill, { input: { text: "hi" }, sessionId: "s" })),
    );
    expect(calls).toEqual(localCalls);
    expect(localCalls.map((call) => (call as unknown[])[0])).toEqual([
      "outer.before",
      "guard.before",
      "outer.after",
      "outer.onFinish",
    ]);
    expect(outcome).toMatchObject({ status: "success", output: local.output });
    expect(outcome.output).toEqual({ text: "hi!", wrapped: true });

    calls.length = 0;
    const denied = final(
      await host.executor.runDispatched(dispatched(skill, { input: { text: "forbidden" } })),
    );
    expect(denied).toMatchObject({
      status: "denied",
      attempts: 0,
      error: { code: "DENIED", message: "not that" },
    });
    expect(calls.map((call) => (call as unknown[])[0])).toEqual([
      "outer.before",
      "guard.before",
      "guard.onError",
      "outer.onFinish",
    ]);
  });

  it("pauses for an approval the skill or an interceptor asks, and runs once without asking again when approved", async () => {
    const host = newHost();
    const skill = registerSkill(host, { name: "delete", approval: "required" });
    const guarded = registerSkill(host, { name: "transfer" });
    const ran: { name: string; approval: ExecutionApproval | null; attempt: number }[] = [];
    host.executor.registerHandler("delete", (_input, ctx: SkillContext) => {
      ran.push({ name: "delete", approval: ctx.approval, attempt: ctx.attempt });
      return { deleted: true };
    });
    host.executor.registerHandler("transfer", (_input, ctx: SkillContext) => {
      ran.push({ name: "transfer", approval: ctx.approval, attempt: ctx.attempt });
      return { sent: true };
    });
    host.executor.use(
      defineInterceptor({
        name: "four-eyes",
        match: { names: "transfer" },
        before: (context) => context.requireApproval("transfers need a second person"),
      }),
    );

    for (const [target, requestedBy] of [
      [skill, "skill"],
      [guarded, "interceptor:four-eyes"],
    ] as const) {
      const request = dispatched(target, { options: { approvalTimeoutMs: 60_000 } });
      const paused = await host.executor.runDispatched(request);
      if (paused.kind !== "paused") throw new Error(`expected a pause, got ${JSON.stringify(paused)}`);
      expect(paused.approval).toMatchObject({ decision: null, requestedBy });
      expect(paused.attempts).toBe(0);
      // A duration: the shared record stamps the deadline on the database's clock.
      expect(paused.approvalTimeoutMs).toBe(60_000);
      expect(ran).toEqual([]);

      const approval: ExecutionApproval = {
        ...paused.approval,
        decision: "approved",
        decidedBy: "reviewer",
        decidedAt: new Date().toISOString(),
      };
      const resumed = final(
        await host.executor.runDispatched({ ...request, approval, attemptsSoFar: paused.attempts }),
      );
      expect(resumed).toMatchObject({ status: "success", attempts: 1 });
      expect(ran).toEqual([{ name: target.name, approval, attempt: 1 }]);
      ran.length = 0;
    }
    expect(count(host, "skill_executions")).toBe(0);
    expect(count(host, "skill_execution_jobs")).toBe(0);
  });

  it("numbers ctx.attempt across a handler's approval request as a queued execution of one host does", async () => {
    const host = newHost();
    const skill = registerSkill(host, { name: "careful" });
    const attempts: number[] = [];
    host.executor.registerHandler("careful", (_input, ctx: SkillContext) => {
      attempts.push(ctx.attempt);
      if (ctx.approval === null)
        throw new SkillboxError("APPROVAL_REQUIRED", "a big one", { data: { requestedBy: "handler" } });
      return { done: true };
    });

    const id = await host.executor.submit("careful", {});
    const waiting = await host.executor.wait(id, { returnOnApproval: true, timeoutMs: 20_000 });
    expect(waiting).toMatchObject({ status: "awaiting_approval", attempts: 1 });
    await host.executor.approve(id, { by: "reviewer" });
    const local = await host.executor.wait(id, { timeoutMs: 20_000 });
    expect(local).toMatchObject({ status: "success", attempts: 2 });
    const localAttempts = attempts.splice(0);
    expect(localAttempts).toEqual([1, 2]);

    const request = dispatched(skill);
    const paused = await host.executor.runDispatched(request);
    if (paused.kind !== "paused") throw new Error(`expected a pause, got ${JSON.stringify(paused)}`);
    expect(paused).toMatchObject({ attempts: 1, approval: { requestedBy: "handler" } });
    const approval: ExecutionApproval = { ...paused.approval, decision: "approved", decidedBy: "reviewer" };
    const resumed = final(
      await host.executor.runDispatched({ ...request, approval, attemptsSoFar: paused.attempts }),
    );
    expect(resumed).toMatchObject({ status: "success", attempts: 2 });
    expect(attempts).toEqual(localAttempts);
  });

  it("hands every progress report to onProgress, and none to the local store", async () => {
    const host = newHost();
    const skill = registerSkill(host, { name: "steps" });
    host.executor.registerHandler("steps", async (_input, ctx: SkillContext) => {
      for (let step = 1; step <= 3; step++)
        ctx.progress({ progress: step, total: 3, message: `step ${step}` });
      return { done: true };
    });
    const reports: ExecutionProgress[] = [];
    const outcome = final(
      await host.executor.runDispatched(
        dispatched(skill, { onProgress: (progress) => reports.push(progress) }),
      ),
    );
    expect(outcome.status).toBe("success");
    expect(reports.map(({ progress, total, message }) => ({ progress, total, message }))).toEqual([
      { progress: 1, total: 3, message: "step 1" },
      { progress: 2, total: 3, message: "step 2" },
      { progress: 3, total: 3, message: "step 3" },
    ]);
    expect(count(host, "skill_execution_events")).toBe(0);
  });

  it("runs nested ctx.call children here, recorded in the local trail with the dispatched execution as parent", async () => {
    const host = newHost();
    const parent = registerSkill(host, { name: "parent", requires: { child: "^1.0.0" } });
    registerSkill(host, { name: "child" });
    host.executor.registerHandler("child", (input: { n: number }) => ({ doubled: input.n * 2 }));
    host.executor.registerHandler("parent", async (_input, ctx: SkillContext) =>
      ctx.call("child", { n: 21 }),
    );
    const request = dispatched(parent, { sessionId: "s-1" });
    const outcome = final(await host.executor.runDispatched(request));
    expect(outcome).toMatchObject({ status: "success", output: { doubled: 42 } });
    const children = await host.executor.listExecutions({ parentExecutionId: request.executionId });
    expect(children).toMatchObject([{ skillName: "child", status: "success", sessionId: "s-1" }]);
    expect(count(host, "skill_executions")).toBe(1);
  });

  it("leaves no row, event or in-memory entry behind after 2000 runs", async () => {
    const host = newHost();
    const skill = registerSkill(host, { name: "noop", input: { type: "object" } });
    host.executor.registerHandler("noop", (input: { n: number }, ctx: SkillContext) => {
      ctx.progress({ progress: input.n });
      return { n: input.n };
    });
    // One local execution first: the structures that grow to their working size once have done so.
    await host.executor.execute("noop", { n: -1 });
    const rows = count(host, "skill_executions");
    const events = count(host, "skill_execution_events");
    const before = insides(host);
    let reports = 0;
    let successes = 0;
    for (let batch = 0; batch < 20; batch++) {
      const outcomes = await Promise.all(
        Array.from({ length: 100 }, (_, index) =>
          host.executor.runDispatched(
            dispatched(skill, { input: { n: batch * 100 + index }, onProgress: () => reports++ }),
          ),
        ),
      );
      successes += outcomes.filter(
        (outcome) => outcome.kind === "final" && outcome.status === "success",
      ).length;
    }
    expect(successes).toBe(2000);
    expect(reports).toBe(2000);
    expect(count(host, "skill_executions")).toBe(rows);
    expect(count(host, "skill_execution_events")).toBe(events);
    expect(count(host, "skill_execution_jobs")).toBe(0);
    expect(insides(host)).toEqual(before);
  });

  it("refuses once the executor closes, and close() waits for a run under way", async () => {
    const host = newHost();
    const skill = registerSkill(host, { name: "held" });
    const release = deferred();
    const entered = deferred();
    host.executor.registerHandler("held", async () => {
      entered.resolve();
      await release.promise;
      return { ok: true };
    });
    const running = host.executor.runDispatched(dispatched(skill));
    await entered.promise;
    let closed = false;
    const closing = host.executor.close().then(() => {
      closed = true;
    });
    await expect(host.executor.runDispatched(dispatched(skill))).rejects.toMatchObject({ code: "BUSY" });
    expect(closed).toBe(false);
    release.resolve();
    expect(final(await running).status).toBe("success");
    await closing;
  });
});

describe("SkillExecutor.runDispatched in worker threads", () => {
  let tree: TemporaryTree | undefined;
  afterEach(() => {
    tree?.cleanup();
    tree = undefined;
  });

  it("terminates a busy loop's thread when the signal aborts: cancelled, and the pool serves on", async () => {
    tree = createTemporaryTree("skillbox-dispatched-");
    const runtime = createWorkerRuntime({ maxThreads: 1 });
    const host = newHost({ runtimes: [runtime] });
    const spin = tree.write(
      "handlers/spin.mjs",
      [
        'import { writeFileSync } from "node:fs";',
        'import { threadId } from "node:worker_threads";',
        "export default function spin(input) {",
        "  writeFileSync(input.marker, String(threadId));",
        "  while (true) {}",
        "}",
        "",
      ].join("\n"),
    );
    const which = tree.write(
      "handlers/which.mjs",
      ['import { threadId } from "node:worker_threads";', "export default () => threadId;", ""].join("\n"),
    );
    const register = (name: string, file: string) =>
      host.registry.register({
        name,
        version: "1.0.0",
        apiKeyId: "public",
        handler: pathToFileURL(file).href,
        runtime: "worker",
        timeoutMs: 120_000,
      });
    const spinner = register("spin", spin);
    const whichThread = register("which", which);
    const marker = tree.path("spin-thread");
    const controller = new AbortController();

    const pending = host.executor.runDispatched(
      dispatched(spinner, { input: { marker }, signal: controller.signal }),
    );
    await waitFor(() => existsSync(marker), "the busy loop to start");
    expect(runtime.threadCount()).toBe(1);
    controller.abort(new Error("cancelled on another host"));
    const outcome = final(await pending);

    expect(outcome).toMatchObject({ status: "cancelled", attempts: 1, error: { code: "CANCELLED" } });
    // The spinning thread was terminated and left the pool (minThreads is 0).
    await waitFor(() => runtime.threadCount() === 0, "the spinning thread to be terminated");
    const next = final(await host.executor.runDispatched(dispatched(whichThread)));
    expect(next.status).toBe("success");
    expect(next.output).not.toBe(Number(readFileSync(marker, "utf8")));
  });
});
