import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createSkillHost, type SkillExecution, type SkillHost } from "@skillbox/core";
import { afterEach, describe, expect, it } from "vitest";
import { createTemporaryHost, type TemporaryHost } from "../../../../test/helpers/temporary-host.js";

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
function reopen(databasePath: string, options: { recoverInterrupted?: boolean } = {}): SkillHost {
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
): Promise<{ child: ChildProcess; executionId: string }> {
  const child = spawn(process.execPath, [FIXTURE, databasePath], { stdio: ["ignore", "pipe", "pipe"] });
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
      const whileRunning = host.executor.getExecution(executionId);
      expect(whileRunning?.status).toBe("running");
      expect(whileRunning?.skillName).toBe("hang");
      expect(whileRunning?.input).toEqual({ pid: child.pid });

      await kill9(child);

      const restarted = reopen(host.databasePath);
      const recovered = restarted.executor.getExecution(executionId);
      expect(recovered?.status).toBe("interrupted");
      expect(recovered?.error?.code).toBe("INTERRUPTED");
      expect(recovered?.finishedAt).not.toBeNull();
      expect(restarted.executor.countExecutions({ status: "running" })).toBe(0);
      expect(restarted.executor.listExecutions({ status: "interrupted" }).map((row) => row.id)).toEqual([
        executionId,
      ]);
    });

    it("does not mark the running row of another live process", async () => {
      const host = newHost();
      const doomed = await startHangingProcess(host.databasePath);
      const survivor = await startHangingProcess(host.databasePath);
      expect(survivor.executionId).not.toBe(doomed.executionId);

      await kill9(doomed.child);
      const restarted = reopen(host.databasePath);
      expect(restarted.executor.getExecution(doomed.executionId)?.status).toBe("interrupted");
      expect(restarted.executor.getExecution(survivor.executionId)?.status).toBe("running");
      expect(restarted.executor.getExecution(survivor.executionId)?.error).toBeNull();

      await kill9(survivor.child);
      const restartedAgain = reopen(host.databasePath);
      expect(restartedAgain.executor.getExecution(survivor.executionId)?.status).toBe("interrupted");
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
        statusSeenByNewHost = second.executor.getExecution(executionId)?.status;
      } finally {
        release.resolve();
      }
      const execution = await pending;
      expect(statusSeenByNewHost).toBe("running");
      expect(execution.status).toBe("success");
      expect(host.executor.getExecution(executionId)?.status).toBe("success");
    });

    it("leaves orphaned rows alone when recoverInterrupted is false", async () => {
      const host = newHost();
      const { child, executionId } = await startHangingProcess(host.databasePath);
      await kill9(child);
      const untouched = reopen(host.databasePath, { recoverInterrupted: false });
      expect(untouched.executor.getExecution(executionId)?.status).toBe("running");
      const recovering = reopen(host.databasePath);
      expect(recovering.executor.getExecution(executionId)?.status).toBe("interrupted");
    });
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
      expect(host.executor.countExecutions()).toBe(total);
      expect(host.executor.countExecutions({ status: "success" })).toBe(total - expectedFailures);
      expect(host.executor.countExecutions({ status: "error" })).toBe(expectedFailures);
      expect(host.executor.countExecutions({ status: ["pending", "running"] })).toBe(0);
      expect(host.executor.countExecutions({ skill: "fail" })).toBe(expectedFailures);

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
