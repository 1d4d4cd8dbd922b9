import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import {
  createSkillHost,
  defineInterceptor,
  defineSkill,
  type ExecutionStreamEvent,
  type SkillHost,
} from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { type Deferred, deferred, registerSkill, rejection, useTemporaryHosts } from "./executor-test-bed.js";

const newHost = useTemporaryHosts();

const WAIT_FIXTURE = fileURLToPath(new URL("../fixtures/wait-for-execution.mjs", import.meta.url));

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** Opens a second host on the file of `host` (another runner, as another process would be). */
function sameFile(
  host: { databasePath: string },
  options: Parameters<typeof createSkillHost>[0] = {},
): SkillHost {
  return newHost.track(
    createSkillHost({ logger: quiet, ...options, database: host.databasePath }),
  ) as SkillHost;
}

function count(host: SkillHost, table: string): number {
  return host.database.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
}

async function collect(events: AsyncIterable<ExecutionStreamEvent>): Promise<ExecutionStreamEvent[]> {
  const seen: ExecutionStreamEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe("SkillExecutor.submit", () => {
  it("resolves once the row is committed queued, keeps the raw input out of the audit columns, and runs it", async () => {
    // The submitting host runs no queued work: the execution waits, queued, for a host that does.
    const submitter = newHost({ queue: false });
    registerSkill(submitter, {
      name: "login",
      input: { type: "object", properties: { password: { type: "string" } } },
    });
    const redact = defineInterceptor({
      name: "redact",
      audit: (_context, entry) => (entry.input === undefined ? entry : { input: { password: "[redacted]" } }),
    });
    submitter.executor.use(redact);
    const id = await submitter.executor.submit("login", { password: "hunter2" });
    // A reader on its own connection sees the row: it is committed, not batched.
    const reader = sameFile(submitter, { queue: false });
    expect(await reader.executor.getExecution(id)).toMatchObject({
      status: "queued",
      input: { password: "[redacted]" },
    });
    const job = reader.database
      .prepare("SELECT input FROM skill_execution_jobs WHERE execution_id = ?")
      .pluck()
      .get(id);
    expect(JSON.parse(job as string)).toEqual({ password: "hunter2" });
    const seen: unknown[] = [];
    const runner = sameFile(submitter);
    runner.executor.use(redact);
    runner.executor.registerHandler("login", (input) => {
      seen.push(input);
      return { ok: true };
    });
    const final = await submitter.executor.wait(id, { timeoutMs: 20_000 });
    expect(final).toMatchObject({
      id,
      status: "success",
      output: { ok: true },
      input: { password: "[redacted]" },
    });
    expect(seen).toEqual([{ password: "hunter2" }]);
    // The raw input goes with the job once the execution ended.
    expect(count(reader, "skill_execution_jobs")).toBe(0);
  });

  it("starts a submit at once when the host has room and nothing waits, writing no job for it", async () => {
    const host = newHost();
    registerSkill(host, { name: "echo" });
    registerSkill(host, { name: "safe", idempotent: true });
    const gate = deferred();
    const jobs: unknown[] = [];
    host.executor.registerHandler("echo", (input) => input);
    host.executor.registerHandler("safe", async (_input, context) => {
      jobs.push(
        host.database
          .prepare("SELECT state, input FROM skill_execution_jobs WHERE execution_id = ?")
          .get(context.executionId),
      );
      await gate.promise;
      return "ok";
    });
    const echoed = await host.executor.submit("echo", { a: 1 });
    expect((await host.executor.wait(echoed)).output).toEqual({ a: 1 });
    expect(count(host, "skill_execution_events")).toBe(0);
    // A skill safe to rerun keeps its input in a job while it runs, for a crash to re-queue it.
    const safe = await host.executor.submit("safe", { b: 2 });
    await expect.poll(() => jobs.length).toBe(1);
    expect(jobs[0]).toEqual({ state: "running", input: '{"b":2}' });
    gate.resolve();
    expect((await host.executor.wait(safe)).status).toBe("success");
    expect(count(host, "skill_execution_jobs")).toBe(0);
  });

  it("refuses what cannot run at once: an unknown skill, input that is not JSON", async () => {
    const host = newHost();
    registerSkill(host, { name: "echo" });
    host.executor.registerHandler("echo", (input) => input);
    await rejection(host.executor.submit("ekko", {}), "SKILL_NOT_FOUND");
    await rejection(host.executor.submit("echo", { big: 10n }), "INPUT_INVALID");
    expect(count(host, "skill_executions")).toBe(0);
  });

  it("answers a repeat of an idempotency key with the first id, and a changed input with a conflict", async () => {
    const host = newHost({ queue: false });
    registerSkill(host, { name: "echo" });
    const first = await host.executor.submit("echo", { a: 1 }, { idempotencyKey: "k" });
    expect(await host.executor.submit("echo", { a: 1 }, { idempotencyKey: "k" })).toBe(first);
    await rejection(host.executor.submit("echo", { a: 2 }, { idempotencyKey: "k" }), "IDEMPOTENCY_CONFLICT");
    expect(count(host, "skill_execution_jobs")).toBe(1);
  });

  it("runs queued executions within the host's limit and a skill's own concurrency, oldest first", async () => {
    const host = newHost({ queue: { concurrency: 2 } });
    registerSkill(host, { name: "slow" });
    registerSkill(host, { name: "single", concurrency: 1 });
    const gates = new Map<string, Deferred<void>>();
    const order: string[] = [];
    let running = 0;
    let mostAtOnce = 0;
    const handler = async (input: { tag: string }) => {
      running++;
      mostAtOnce = Math.max(mostAtOnce, running);
      order.push(input.tag);
      const gate = deferred();
      gates.set(input.tag, gate);
      await gate.promise;
      running--;
      return input.tag;
    };
    host.executor.registerHandler("slow", handler);
    host.executor.registerHandler("single", handler);
    const ids = [
      await host.executor.submit("single", { tag: "s1" }),
      await host.executor.submit("single", { tag: "s2" }),
      await host.executor.submit("slow", { tag: "a" }),
      await host.executor.submit("slow", { tag: "b" }),
    ];
    await expect.poll(() => order.length).toBe(2);
    // `single` allows one at a time: the second slot goes to the oldest job of another skill.
    expect(order).toEqual(["s1", "a"]);
    gates.get("s1")?.resolve();
    await expect.poll(() => order.length).toBe(3);
    expect(order[2]).toBe("s2");
    for (const tag of ["a", "s2"]) gates.get(tag)?.resolve();
    await expect.poll(() => order.length).toBe(4);
    gates.get("b")?.resolve();
    for (const id of ids) expect((await host.executor.wait(id)).status).toBe("success");
    expect(mostAtOnce).toBe(2);
  });

  it("is fair across owners: a newcomer's job does not wait behind another owner's backlog", async () => {
    const host = newHost({ queue: { concurrency: 1 } });
    registerSkill(host, { name: "work" });
    const order: string[] = [];
    const gate = deferred();
    host.executor.registerHandler("work", async (input: { tag: string }) => {
      order.push(input.tag);
      await gate.promise;
    });
    const busy: string[] = [];
    for (let index = 0; index < 4; index++)
      busy.push(await host.executor.submit("work", { tag: `a${index}` }, { apiKeyId: "alice" }));
    const bobs = await host.executor.submit("work", { tag: "b0" }, { apiKeyId: "bob" });
    gate.resolve();
    for (const id of [...busy, bobs]) await host.executor.wait(id);
    // Alice's first was running when Bob submitted; Bob's runs next, before the rest of hers.
    expect(order).toEqual(["a0", "b0", "a1", "a2", "a3"]);
  });
});

describe("SkillExecutor.cancel", () => {
  it("cancels a queued execution at once, a running one through its signal, and refuses a finished one", async () => {
    const host = newHost({ queue: { concurrency: 1 } });
    registerSkill(host, { name: "block" });
    const aborted = deferred<unknown>();
    host.executor.registerHandler("block", (_input, context) => {
      context.signal.addEventListener("abort", () => aborted.resolve(context.signal.reason));
      return new Promise(() => {});
    });
    const running = await host.executor.submit("block", {});
    const queued = await host.executor.submit("block", {});
    await expect.poll(async () => (await host.executor.getExecution(running))?.status).toBe("running");
    const cancelledQueued = await host.executor.cancel(queued, { reason: "not needed" });
    expect(cancelledQueued).toMatchObject({ status: "cancelled", error: { code: "CANCELLED" } });
    expect(cancelledQueued.error?.message).toContain("not needed");
    const cancelledRunning = await host.executor.cancel(running, { reason: "operator stop" });
    expect(cancelledRunning).toMatchObject({ status: "cancelled", error: { code: "CANCELLED" } });
    expect(String(((await aborted.promise) as { message?: string }).message)).toContain("operator stop");
    const finished = await rejection(host.executor.cancel(running), "EXECUTION_FINISHED");
    expect(finished.data).toEqual({ status: "cancelled" });
    await rejection(host.executor.cancel("no-such-id"), "EXECUTION_NOT_FOUND");
  });

  it("cancels an execute() call under way by its id", async () => {
    const host = newHost();
    registerSkill(host, { name: "block" });
    const started = deferred<string>();
    host.executor.registerHandler("block", (_input, context) => {
      started.resolve(context.executionId);
      return new Promise(() => {});
    });
    const execution = host.executor.execute("block", {});
    const id = await started.promise;
    await host.executor.cancel(id, { reason: "user pressed stop" });
    expect(await execution).toMatchObject({ id, status: "cancelled" });
  });

  it("does not let an owner see or cancel another owner's execution", async () => {
    const host = newHost({ queue: false });
    registerSkill(host, { name: "echo" });
    const id = await host.executor.submit("echo", {}, { apiKeyId: "alice" });
    await rejection(host.executor.cancel(id, { apiKeyId: "mallory" }), "EXECUTION_NOT_FOUND");
    await rejection(host.executor.wait(id, { apiKeyId: "mallory" }), "EXECUTION_NOT_FOUND");
    expect((await host.executor.getExecution(id))?.status).toBe("queued");
  });

  it("asks the host running an execution in another process to cancel it", async () => {
    const runner = newHost({ queue: { concurrency: 1, pollIntervalMs: 20 } });
    registerSkill(runner, { name: "block" });
    runner.executor.registerHandler("block", () => new Promise(() => {}));
    const id = await runner.executor.submit("block", {});
    await expect.poll(async () => (await runner.executor.getExecution(id))?.status).toBe("running");
    const other = sameFile(runner, { queue: false });
    const asked = await other.executor.cancel(id, { reason: "from afar" });
    expect(asked.status).toBe("running");
    expect((await other.executor.wait(id, { timeoutMs: 10_000 })).status).toBe("cancelled");
  });
});

describe("approvals", () => {
  it("stops an execute() of a skill that requires approval at once, and runs it once approved", async () => {
    const host = newHost();
    registerSkill(host, {
      name: "transfer",
      approval: "required",
      input: {
        type: "object",
        properties: { amount: { type: "number", maximum: 100 } },
        required: ["amount"],
      },
    });
    const ran: unknown[] = [];
    host.executor.registerHandler("transfer", (input, context) => {
      ran.push({ input, approval: context.approval?.decision });
      return { sent: (input as { amount: number }).amount };
    });
    const paused = await host.executor.execute("transfer", { amount: 10 });
    expect(paused).toMatchObject({ status: "awaiting_approval", output: null, error: null });
    expect(paused.approval).toMatchObject({ requestedBy: "skill", decision: null });
    expect(ran).toEqual([]);
    // An edited input that breaks the schema changes nothing.
    const invalid = await rejection(
      host.executor.approve(paused.id, { by: "alice", input: { amount: 1000 } }),
      "INPUT_INVALID",
    );
    expect(invalid.message).toContain("amount");
    expect((await host.executor.getExecution(paused.id))?.status).toBe("awaiting_approval");
    const approved = await host.executor.approve(paused.id, {
      by: "alice",
      input: { amount: 20 },
      comment: "ok",
    });
    expect(approved.status).toBe("queued");
    const final = await host.executor.wait(paused.id);
    expect(final).toMatchObject({ status: "success", output: { sent: 20 }, input: { amount: 20 } });
    expect(final.approval).toMatchObject({
      decision: "approved",
      decidedBy: "alice",
      comment: "ok",
      inputEdited: true,
    });
    expect(ran).toEqual([{ input: { amount: 20 }, approval: "approved" }]);
    await rejection(host.executor.approve(paused.id, { by: "alice" }), "APPROVAL_NOT_PENDING");
  });

  it("records a rejection as final with who and why; a second decision is refused", async () => {
    const host = newHost();
    registerSkill(host, { name: "delete", approval: "required" });
    host.executor.registerHandler("delete", () => "deleted");
    const paused = await host.executor.execute("delete", {});
    const rejected = await host.executor.reject(paused.id, { by: "bob", reason: "too risky" });
    expect(rejected).toMatchObject({ status: "rejected", error: { code: "APPROVAL_REJECTED" } });
    expect(rejected.error?.message).toContain("too risky");
    expect(rejected.approval).toMatchObject({ decision: "rejected", decidedBy: "bob", comment: "too risky" });
    const twice = await rejection(host.executor.approve(paused.id, { by: "bob" }), "APPROVAL_NOT_PENDING");
    expect(twice.data).toMatchObject({ status: "rejected", decision: "rejected" });
    await rejection(host.executor.approve(paused.id, { by: "" }), "INPUT_INVALID");
    expect(count(host, "skill_execution_jobs")).toBe(0);
  });

  it("lets an approval expire: the execution ends rejected with APPROVAL_EXPIRED", async () => {
    const host = newHost({ queue: { pollIntervalMs: 20 } });
    registerSkill(host, { name: "late", approval: "required", approvalTimeoutMs: 30 });
    host.executor.registerHandler("late", () => "ran");
    const paused = await host.executor.execute("late", {});
    const final = await host.executor.wait(paused.id, { timeoutMs: 10_000 });
    expect(final).toMatchObject({ status: "rejected", error: { code: "APPROVAL_EXPIRED" } });
    expect(final.approval?.decision).toBe("expired");
    await rejection(host.executor.approve(paused.id, { by: "alice" }), "APPROVAL_NOT_PENDING");
  });

  it("lets an interceptor ask for approval; after it, the interceptor's before passes", async () => {
    const host = newHost();
    registerSkill(host, { name: "pay" });
    host.executor.registerHandler("pay", () => "paid");
    const befores: (string | null)[] = [];
    host.executor.use(
      defineInterceptor({
        name: "large-payments",
        before(context) {
          befores.push(context.approval?.decision ?? null);
          context.requireApproval("payments need a second pair of eyes");
        },
      }),
    );
    const paused = await host.executor.execute("pay", {});
    expect(paused.approval).toMatchObject({
      reason: "payments need a second pair of eyes",
      requestedBy: "interceptor:large-payments",
    });
    await host.executor.approve(paused.id, { by: "carol" });
    expect(await host.executor.wait(paused.id)).toMatchObject({ status: "success", output: "paid" });
    expect(befores).toEqual([null, "approved"]);
  });

  it("asks a defineSkill predicate, in the handler's runtime, whether this input needs approval", async () => {
    const host = newHost();
    registerSkill(host, { name: "spend" });
    const skill = defineSkill({
      approval: (input: { amount: number }) =>
        input.amount > 50 ? `spending ${input.amount} needs approval` : false,
      handler: (input: unknown) => `spent ${(input as { amount: number }).amount}`,
    });
    host.executor.registerHandler("spend", skill.handler);
    expect(await host.executor.execute("spend", { amount: 5 })).toMatchObject({ status: "success" });
    const paused = await host.executor.execute("spend", { amount: 500 });
    expect(paused).toMatchObject({
      status: "awaiting_approval",
      approval: { reason: "spending 500 needs approval" },
    });
    await host.executor.approve(paused.id, { by: "dave" });
    expect(await host.executor.wait(paused.id)).toMatchObject({ output: "spent 500" });
  });
});

describe("events and progress", () => {
  it("yields the status, every progress report in order and the final record", async () => {
    const host = newHost();
    registerSkill(host, { name: "steps" });
    const go = deferred();
    host.executor.registerHandler("steps", async (_input, context) => {
      await go.promise;
      for (let step = 1; step <= 3; step++)
        context.progress({ progress: step, total: 3, message: `step ${step}` });
      context.progress({ progress: Number.NaN });
      return "done";
    });
    const id = await host.executor.submit("steps", {});
    const events = collect(host.executor.events(id));
    await new Promise((resolve) => setTimeout(resolve, 20));
    go.resolve();
    const seen = await events;
    const progress = seen
      .filter((event) => event.type === "progress")
      .map((event) => event.progress.progress);
    expect(progress).toEqual([1, 2, 3]);
    expect(seen.at(-1)).toMatchObject({ type: "finished", execution: { status: "success", output: "done" } });
    expect(seen[0]?.type).toBe("status");
    expect((await host.executor.getExecution(id))?.progress).toMatchObject({
      progress: 3,
      total: 3,
      message: "step 3",
    });
  });

  it("yields just the final record for an execution that has ended", async () => {
    const host = newHost();
    registerSkill(host, { name: "echo" });
    host.executor.registerHandler("echo", (input) => input);
    const done = await host.executor.execute("echo", { a: 1 });
    const seen = await collect(host.executor.events(done.id));
    expect(seen).toEqual([{ type: "finished", executionId: done.id, execution: done }]);
  });

  it("relays the events of an execution another process runs", async () => {
    const runner = newHost({ queue: { pollIntervalMs: 20 } });
    registerSkill(runner, { name: "steps" });
    const go = deferred();
    runner.executor.registerHandler("steps", async (_input, context) => {
      await go.promise;
      context.progress({ progress: 1, message: "half" });
      await new Promise((resolve) => setTimeout(resolve, 150));
      context.progress({ progress: 2, message: "all" });
      return "done";
    });
    const watcher = sameFile(runner, { queue: { pollIntervalMs: 20 }, approvalTimeoutMs: null });
    const id = await runner.executor.submit("steps", {});
    const events = collect(watcher.executor.events(id));
    await new Promise((resolve) => setTimeout(resolve, 50));
    go.resolve();
    const seen = await events;
    expect(seen.filter((event) => event.type === "progress").map((event) => event.progress.message)).toEqual([
      "half",
      "all",
    ]);
    expect(seen.at(-1)).toMatchObject({ type: "finished", execution: { status: "success" } });
  });

  it("writes nothing more on the fast path: execute() adds no job and no event rows", async () => {
    const host = newHost();
    registerSkill(host, { name: "echo" });
    host.executor.registerHandler("echo", (input) => input);
    for (let index = 0; index < 5; index++) await host.executor.execute("echo", { index });
    expect(count(host, "skill_execution_jobs")).toBe(0);
    expect(count(host, "skill_execution_events")).toBe(0);
  });

  it("watches many executions, filtered by owner", async () => {
    const host = newHost();
    registerSkill(host, { name: "echo" });
    host.executor.registerHandler("echo", (input) => input);
    const controller = new AbortController();
    const seen: ExecutionStreamEvent[] = [];
    const watching = (async () => {
      try {
        for await (const event of host.executor.watchExecutions({
          apiKeyId: "alice",
          signal: controller.signal,
        }))
          seen.push(event);
      } catch (error) {
        return error;
      }
    })();
    const alices = await host.executor.submit("echo", { who: "alice" }, { apiKeyId: "alice" });
    await host.executor.execute("echo", { who: "bob" }, { apiKeyId: "bob" });
    await host.executor.wait(alices);
    controller.abort();
    expect(((await watching) as { code?: string }).code).toBe("WAIT_ABORTED");
    expect(new Set(seen.map((event) => event.executionId))).toEqual(new Set([alices]));
    expect(seen.at(-1)).toMatchObject({ type: "finished" });
  });

  it("ends a wait at its timeout with WAIT_TIMEOUT carrying the record, the execution going on", async () => {
    const host = newHost({ queue: false });
    registerSkill(host, { name: "echo" });
    const id = await host.executor.submit("echo", {});
    const timedOut = await rejection(host.executor.wait(id, { timeoutMs: 20 }), "WAIT_TIMEOUT");
    expect((timedOut.data as { execution: { status: string } }).execution.status).toBe("queued");
    const controller = new AbortController();
    const waiting = host.executor.wait(id, { signal: controller.signal });
    controller.abort();
    await rejection(waiting, "WAIT_ABORTED");
  });
});

describe("restarts", () => {
  it("runs what one host queued, and decides what it left awaiting approval, after the next start", async () => {
    const first = newHost({ queue: false });
    registerSkill(first, { name: "echo" });
    registerSkill(first, { name: "guarded", approval: "required" });
    const queued = await first.executor.submit("echo", { n: 1 });
    const paused = await first.executor.execute("guarded", { n: 2 });
    await first.close();
    const second = sameFile(first);
    second.executor.registerHandler("echo", (input) => input);
    second.executor.registerHandler("guarded", (input) => input);
    expect(await second.executor.wait(queued)).toMatchObject({ status: "success", output: { n: 1 } });
    expect((await second.executor.getExecution(paused.id))?.status).toBe("awaiting_approval");
    await second.executor.approve(paused.id, { by: "erin" });
    expect(await second.executor.wait(paused.id)).toMatchObject({ status: "success", output: { n: 2 } });
  });
});

describe("a process that waits", () => {
  it("stays alive while it waits for an execution another process runs", async () => {
    const runner = newHost({ queue: false });
    registerSkill(runner, { name: "echo" });
    const child = spawn(process.execPath, [WAIT_FIXTURE, runner.databasePath], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = once(child, "exit");
    try {
      const lines = createInterface({ input: child.stdout });
      const seen: string[] = [];
      const submitted = new Promise<string>((resolve) =>
        lines.on("line", (line) => {
          seen.push(line);
          const match = /^submitted (\S+)$/.exec(line);
          if (match) resolve(match[1]!);
        }),
      );
      const id = await Promise.race([
        submitted,
        exited.then(([code]) => {
          throw new Error(`the waiting process exited early (code ${code})`);
        }),
      ]);
      // Give an unheld process time to fall out of its event loop before anyone runs the execution.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(child.exitCode).toBeNull();
      const worker = sameFile(runner, { queue: { pollIntervalMs: 20 } });
      worker.executor.registerHandler("echo", (input) => input);
      const [code] = await exited;
      expect(code).toBe(0);
      expect(seen).toContain("finished success");
      expect((await worker.executor.getExecution(id))?.status).toBe("success");
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
    }
  });
});
