import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import {
  createSkillHost,
  isSkillboxError,
  type SkillExecution,
  type SkillHost,
  type SkillHostOptions,
} from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import type Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";

const FIXTURE = fileURLToPath(new URL("../fixtures/hanging-execution.mjs", import.meta.url));
const silentLogger = { debug() {}, info() {}, warn() {}, error() {} };

const hosts: TemporaryHost[] = [];
const extraHosts: SkillHost[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    }
  }
  for (const host of extraHosts.splice(0)) await host.close();
  for (const host of hosts.splice(0)) await host.dispose();
});

function newHost(): TemporaryHost {
  const host = createTemporaryHost();
  hosts.push(host);
  return host;
}

/** Opens another host on an existing database file (what a restarted process does). */
function reopen(databasePath: string, options: Omit<SkillHostOptions, "database"> = {}): SkillHost {
  const host = createSkillHost({ database: databasePath, logger: silentLogger, ...options });
  extraHosts.push(host);
  return host;
}

/**
 * Starts `node fixtures/hanging-execution.mjs <databasePath>` and resolves once it prints
 * "running <executionId>", i.e. once its handler runs and its `running` row is committed.
 */
async function startHangingProcess(
  databasePath: string,
  options: { runnerLeaseMs?: number; idempotencyKey?: string; finishOnSignal?: boolean } = {},
): Promise<{ child: ChildProcess; executionId: string }> {
  const child = spawn(process.execPath, [FIXTURE, databasePath, JSON.stringify(options)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => {
    stderr += chunk;
  });
  const lines = createInterface({ input: child.stdout! });
  try {
    const executionId = await new Promise<string>((resolve, reject) => {
      lines.on("line", (line) => {
        const match = /^running (\S+)$/.exec(line);
        if (match) resolve(match[1]!);
      });
      child.once("exit", (code, signal) =>
        reject(new Error(`hanging-execution.mjs exited early (code ${code}, signal ${signal}): ${stderr}`)),
      );
      child.once("error", reject);
    });
    return { child, executionId };
  } finally {
    lines.close();
  }
}

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/**
 * Records the runner of `executionId` under another host name, as if its process ran in another
 * container: this host can no longer check its pid, only its lease.
 */
function moveRunnerToAnotherHost(database: Database.Database, executionId: string): void {
  const { changes } = database
    .prepare(
      "UPDATE skillbox_runners SET host = 'another-container' WHERE id = (SELECT runner FROM skill_executions WHERE id = ?)",
    )
    .run(executionId);
  expect(changes).toBe(1);
}

/** Resolves once the lease of the runner of `executionId` has expired (its process must be dead). */
async function leaseExpiry(database: Database.Database, executionId: string): Promise<void> {
  const leaseOf = database
    .prepare<[string], number | null>(
      "SELECT lease_expires_at FROM skillbox_runners WHERE id = (SELECT runner FROM skill_executions WHERE id = ?)",
    )
    .pluck();
  await vi.waitFor(
    () => {
      const expiresAt = leaseOf.get(executionId);
      expect(expiresAt).toBeTypeOf("number");
      expect(expiresAt!).toBeLessThan(Date.now());
    },
    { timeout: 10_000, interval: 50 },
  );
}

async function kill9(child: ChildProcess): Promise<void> {
  const exited = once(child, "exit");
  expect(child.kill("SIGKILL")).toBe(true);
  const [code, signal] = await exited;
  expect(code).toBeNull();
  expect(signal).toBe("SIGKILL");
}

describe("SkillExecutor", () => {
  describe("crash recovery", () => {
    it("marks the row of a process killed with SIGKILL mid-execution interrupted on the next start", async () => {
      const host = newHost();
      const { child, executionId } = await startHangingProcess(host.databasePath);

      // The child's row is committed before its handler runs, so another connection sees it.
      const whileRunning = await host.executor.getExecution(executionId);
      expect(whileRunning?.status).toBe("running");
      expect(whileRunning?.skillName).toBe("hang");
      expect(whileRunning?.input).toEqual({ pid: child.pid });

      await kill9(child);

      const restarted = reopen(host.databasePath);
      const recovered = await restarted.executor.getExecution(executionId);
      expect(recovered?.status).toBe("interrupted");
      expect(recovered?.error?.code).toBe("INTERRUPTED");
      expect(recovered?.finishedAt).not.toBeNull();
      expect(await restarted.executor.countExecutions({ status: "running" })).toBe(0);
      expect(
        (await restarted.executor.listExecutions({ status: "interrupted" })).map((row) => row.id),
      ).toEqual([executionId]);
    });

    it("does not mark the running row of another live process", async () => {
      const host = newHost();
      const doomed = await startHangingProcess(host.databasePath);
      const survivor = await startHangingProcess(host.databasePath);
      expect(survivor.executionId).not.toBe(doomed.executionId);

      await kill9(doomed.child);
      const restarted = reopen(host.databasePath);
      expect((await restarted.executor.getExecution(doomed.executionId))?.status).toBe("interrupted");
      expect((await restarted.executor.getExecution(survivor.executionId))?.status).toBe("running");
      expect((await restarted.executor.getExecution(survivor.executionId))?.error).toBeNull();

      await kill9(survivor.child);
      const restartedAgain = reopen(host.databasePath);
      expect((await restartedAgain.executor.getExecution(survivor.executionId))?.status).toBe("interrupted");
    });

    it("does not mark the running row of another live host in the same process", async () => {
      const host = newHost();
      host.registry.register({ name: "slow", version: "1.0.0", handler: "slow", apiKeyId: "system" });
      const started = deferred<string>();
      const release = deferred<void>();
      host.executor.registerHandler("slow", async (_input, ctx) => {
        started.resolve(ctx.executionId);
        await release.promise;
        return "finished";
      });
      const pending = host.executor.execute("slow", {});
      const executionId = await started.promise;

      let statusSeenByNewHost: string | undefined;
      try {
        const second = reopen(host.databasePath);
        statusSeenByNewHost = (await second.executor.getExecution(executionId))?.status;
      } finally {
        release.resolve();
      }
      const execution = await pending;
      expect(statusSeenByNewHost).toBe("running");
      expect(execution.status).toBe("success");
      expect((await host.executor.getExecution(executionId))?.status).toBe("success");
    });

    it("leaves orphaned rows alone when recoverInterrupted is false", async () => {
      const host = newHost();
      const { child, executionId } = await startHangingProcess(host.databasePath);
      await kill9(child);
      const untouched = reopen(host.databasePath, { recoverInterrupted: false });
      expect((await untouched.executor.getExecution(executionId))?.status).toBe("running");
      const recovering = reopen(host.databasePath);
      expect((await recovering.executor.getExecution(executionId))?.status).toBe("interrupted");
    });
  });

  describe("runner leases", () => {
    it("marks the rows of a dead runner on another host interrupted on start once its lease expired", async () => {
      const host = newHost();
      const { child, executionId } = await startHangingProcess(host.databasePath, { runnerLeaseMs: 300 });
      moveRunnerToAnotherHost(host.database, executionId);
      await kill9(child);
      await leaseExpiry(host.database, executionId);

      const restarted = reopen(host.databasePath);
      const recovered = await restarted.executor.getExecution(executionId);
      expect(recovered?.status).toBe("interrupted");
      expect(recovered?.error?.code).toBe("INTERRUPTED");
      expect(await restarted.executor.countExecutions({ status: "running" })).toBe(0);
    });

    it("leaves the rows of a runner on another host alone while its lease holds", async () => {
      const host = newHost();
      // The default lease (30 s) outlives this test: another host cannot tell the runner is dead.
      const { child, executionId } = await startHangingProcess(host.databasePath);
      moveRunnerToAnotherHost(host.database, executionId);
      await kill9(child);

      const restarted = reopen(host.databasePath);
      expect((await restarted.executor.getExecution(executionId))?.status).toBe("running");
    });

    it("marks them interrupted by the periodic sweep of a host that was already running", async () => {
      const host = newHost();
      const survivor = reopen(host.databasePath, { runnerLeaseMs: 300 });
      const { child, executionId } = await startHangingProcess(host.databasePath, { runnerLeaseMs: 300 });
      moveRunnerToAnotherHost(host.database, executionId);
      await kill9(child);

      await vi.waitFor(
        async () => expect((await survivor.executor.getExecution(executionId))?.status).toBe("interrupted"),
        { timeout: 10_000, interval: 50 },
      );
      expect((await survivor.executor.getExecution(executionId))?.error?.code).toBe("INTERRUPTED");
    });

    it("keeps renewing the lease of a live host, so its rows are never swept", async () => {
      const host = newHost();
      const sweeper = reopen(host.databasePath, { runnerLeaseMs: 300 });
      const { child, executionId } = await startHangingProcess(host.databasePath, { runnerLeaseMs: 300 });
      moveRunnerToAnotherHost(host.database, executionId);
      const renewals = host.database
        .prepare<[string], number>(
          "SELECT lease_expires_at FROM skillbox_runners WHERE id = (SELECT runner FROM skill_executions WHERE id = ?)",
        )
        .pluck();
      const first = renewals.get(executionId)!;
      // Several renewals (and sweeps of the other host) later the row is still running.
      await vi.waitFor(() => expect(renewals.get(executionId)!).toBeGreaterThan(first + 500), {
        timeout: 10_000,
        interval: 50,
      });
      expect((await sweeper.executor.getExecution(executionId))?.status).toBe("running");
      await kill9(child);
    });

    it("refuses a runnerLeaseMs that is not a usable number of milliseconds with CONFIG_INVALID", () => {
      const host = newHost();
      for (const runnerLeaseMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 3_000_000_000]) {
        let thrown: unknown;
        try {
          createSkillHost({ database: host.database, logger: silentLogger, runnerLeaseMs });
        } catch (error) {
          thrown = error;
        }
        expect(isSkillboxError(thrown) && thrown.code).toBe("CONFIG_INVALID");
        expect(String((thrown as Error).message)).toContain("runnerLeaseMs");
      }
    });

    it("keeps the first final state when a runner taken for dead wakes up and finishes", async () => {
      const host = newHost();
      const { child, executionId } = await startHangingProcess(host.databasePath, {
        runnerLeaseMs: 300,
        finishOnSignal: true,
      });
      const runnerQuery = host.database.prepare<
        [string],
        { closed_at: number | null; lease_expires_at: number }
      >(
        "SELECT closed_at, lease_expires_at FROM skillbox_runners WHERE id = (SELECT runner FROM skill_executions WHERE id = ?)",
      );
      const runner = { get: () => runnerQuery.get(executionId) };
      // A stopped process is alive (its pid answers) but renews nothing: only its lease tells.
      expect(child.kill("SIGSTOP")).toBe(true);
      try {
        await leaseExpiry(host.database, executionId);
        reopen(host.databasePath);
        expect((await host.executor.getExecution(executionId))?.status).toBe("interrupted");
        expect(runner.get()?.closed_at).not.toBeNull();
      } finally {
        child.kill("SIGCONT");
      }
      // Woken up, it finds its lease taken and renews on under a fresh one.
      await vi.waitFor(
        () => {
          const row = runner.get()!;
          expect(row.closed_at).toBeNull();
          expect(row.lease_expires_at).toBeGreaterThan(Date.now());
        },
        { timeout: 10_000, interval: 50 },
      );
      const output = createInterface({ input: child.stdout! });
      const finished = new Promise<string>((resolve) => output.on("line", resolve));
      const exited = once(child, "exit");
      child.kill("SIGUSR2");
      // Its caller gets its result; the audit trail keeps the state it was given first.
      expect(await finished).toBe("finished success");
      expect((await exited)[0]).toBe(0);
      output.close();
      expect((await host.executor.getExecution(executionId))?.status).toBe("interrupted");
    }, 20_000);

    it("answers a repeat of an idempotency key whose runner died on another host with the interrupted execution", async () => {
      const host = newHost();
      // Started before the child, so its own start recovers nothing: the repeat must.
      const retrying = reopen(host.databasePath);
      const { child, executionId } = await startHangingProcess(host.databasePath, {
        runnerLeaseMs: 300,
        idempotencyKey: "order-7",
      });
      moveRunnerToAnotherHost(host.database, executionId);
      const pid = child.pid;
      await kill9(child);

      const repeat = await retrying.executor.execute("hang", { pid }, { idempotencyKey: "order-7" });
      expect(repeat.id).toBe(executionId);
      expect(repeat.status).toBe("interrupted");
      expect(repeat.error?.code).toBe("INTERRUPTED");
    }, 20_000);

    it("ends a repeat's wait for another process's execution when the caller's signal aborts", async () => {
      const host = newHost();
      const { child, executionId } = await startHangingProcess(host.databasePath, {
        idempotencyKey: "order-8",
      });
      const waiting = reopen(host.databasePath);
      const controller = new AbortController();
      const repeat = waiting.executor.execute(
        "hang",
        { pid: child.pid },
        { idempotencyKey: "order-8", signal: controller.signal },
      );
      controller.abort();
      const error = await repeat.then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(isSkillboxError(error) && error.code).toBe("CANCELLED");
      expect(String((error as Error).message)).toContain(executionId);
      expect((await waiting.executor.getExecution(executionId))?.status).toBe("running");
    });

    it("gives up waiting for a live runner's execution past the skill's deadline with TIMEOUT", async () => {
      const host = newHost();
      const { child, executionId } = await startHangingProcess(host.databasePath, {
        idempotencyKey: "order-9",
      });
      // The skill sets no timeout: this host's default (100 ms, one attempt) bounds how long the
      // first run can take, plus one lease for a dead runner to be noticed.
      const waiting = reopen(host.databasePath, { defaultTimeoutMs: 100, runnerLeaseMs: 300 });
      const error = await waiting.executor
        .execute("hang", { pid: child.pid }, { idempotencyKey: "order-9" })
        .then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
      expect(isSkillboxError(error) && error.code).toBe("TIMEOUT");
      expect(String((error as Error).message)).toContain(executionId);
      expect((await waiting.executor.getExecution(executionId))?.status).toBe("running");
    }, 20_000);
  });

  describe("concurrency", () => {
    it("records exactly one final row per execution for 10,000 executions at concurrency 256", async () => {
      const host = newHost();
      host.registry.register({ name: "work", version: "1.0.0", handler: "work", apiKeyId: "system" });
      host.registry.register({ name: "fail", version: "1.0.0", handler: "fail", apiKeyId: "system" });
      let inFlight = 0;
      let maxInFlight = 0;
      host.executor.registerHandler("work", async (input: { index: number }) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        return { index: input.index };
      });
      host.executor.registerHandler("fail", async (input: { index: number }) => {
        await Promise.resolve();
        throw new Error(`execution ${input.index} failed on purpose`);
      });

      const total = 10_000;
      const concurrency = 256;
      const failing = (index: number) => index % 10 === 7;
      const results: SkillExecution[] = new Array(total);
      let next = 0;
      const worker = async () => {
        for (let index = next++; index < total; index = next++) {
          results[index] = await host.executor.execute(failing(index) ? "fail" : "work", { index });
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));

      const expectedFailures = Array.from({ length: total }, (_, index) => index).filter(failing).length;
      expect(expectedFailures).toBe(1_000);
      expect(maxInFlight).toBeGreaterThan(1);
      expect(maxInFlight).toBeLessThanOrEqual(concurrency);

      // What execute() returned.
      expect(new Set(results.map((execution) => execution.id)).size).toBe(total);
      results.forEach((execution, index) => {
        if (failing(index)) {
          expect(execution.status).toBe("error");
          expect(execution.error?.code).toBe("HANDLER_ERROR");
        } else {
          expect(execution.status).toBe("success");
          expect(execution.output).toEqual({ index });
        }
      });

      // What the audit trail holds — already committed, since every execute() has resolved.
      expect(await host.executor.countExecutions()).toBe(total);
      expect(await host.executor.countExecutions({ status: "success" })).toBe(total - expectedFailures);
      expect(await host.executor.countExecutions({ status: "error" })).toBe(expectedFailures);
      expect(await host.executor.countExecutions({ status: ["pending", "running"] })).toBe(0);
      expect(await host.executor.countExecutions({ skill: "fail" })).toBe(expectedFailures);

      const rows = host.database
        .prepare("SELECT id, input, output, status, error_code, attempts, finished_at FROM skill_executions")
        .all() as {
        id: string;
        input: string;
        output: string | null;
        status: string;
        error_code: string | null;
        attempts: number;
        finished_at: number | null;
      }[];
      expect(rows).toHaveLength(total);
      const byId = new Map(rows.map((row) => [row.id, row]));
      results.forEach((execution, index) => {
        const row = byId.get(execution.id);
        expect(row).toBeDefined();
        expect(JSON.parse(row!.input)).toEqual({ index });
        expect(row!.status).toBe(execution.status);
        expect(row!.attempts).toBe(1);
        expect(row!.finished_at).not.toBeNull();
        if (failing(index)) expect(row!.error_code).toBe("HANDLER_ERROR");
        else expect(JSON.parse(row!.output!)).toEqual({ index });
      });
    }, 120_000);
  });
});
