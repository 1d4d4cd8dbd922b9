import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createBwrapProvider, createContainerRuntime, SandboxRunner } from "@skillbox/sandbox";
import { bwrapRequirement, describeWithEngine } from "@skillbox/test-helpers/engine-availability";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import {
  createRecordingLogger,
  expectProbeLogs,
  type LoadedContainerSkills,
  loadContainerSkills,
  type RecordingLogger,
} from "./fixtures/container-skills.js";

const CLEANUP_TIMEOUT = { timeout: 10_000, interval: 50 };

/** Host processes whose command line mentions `text` (the sandbox's runner names the skill's path). */
function processesMentioning(text: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
      if (commandLine.includes(text)) found.push(`${entry}: ${commandLine}`);
    } catch {
      // The process ended while the list was read.
    }
  }
  return found;
}

describeWithEngine("createContainerRuntime (bwrap)", bwrapRequirement(), () => {
  const runner = new SandboxRunner({ provider: createBwrapProvider() });
  let host: TemporaryHost;
  let logs: RecordingLogger;
  let skills: LoadedContainerSkills;

  beforeEach(async () => {
    logs = createRecordingLogger();
    host = createTemporaryHost({ runtimes: [createContainerRuntime({ runner })], logger: logs.logger });
    skills = await loadContainerSkills(host);
  });

  afterEach(async () => {
    await host.dispose();
    skills.cleanup();
    await runner.killAll();
  });

  /** Resolves once no sandbox of the runner, and no process running the skills' code, is left. */
  async function expectNothingLeft(): Promise<void> {
    await vi.waitFor(() => {
      expect(runner.getRunningCount()).toBe(0);
      expect(processesMentioning(skills.tree.root)).toEqual([]);
    }, CLEANUP_TIMEOUT);
  }

  it("runs a TypeScript handler from a skill folder under the OS temp dir, as nobody, with a fresh /tmp", async () => {
    // bwrap mounts a fresh /tmp: the skill folder (under it) is bound back, nothing else of it is.
    expect(skills.tree.root.startsWith(tmpdir())).toBe(true);
    const hostOnly = skills.tree.write("host-only.txt", "outside the skill folder");

    const execution = await host.executor.execute("probe", { msg: "hello", hostPath: hostOnly });

    expect(execution.status).toBe("success");
    expect(execution.output).toEqual({
      reply: "HELLO!",
      uid: 65534,
      hostname: "skillbox",
      seesHostPath: false,
      skill: "probe@1.0.0",
      attempt: 1,
      executionId: execution.id,
    });
    await expectProbeLogs(logs, execution.id);
  });

  it("delivers a SkillboxError thrown in the handler with its own code", async () => {
    const execution = await host.executor.execute("probe", { msg: "x", failWith: "QUOTA_EXCEEDED" });

    expect(execution).toMatchObject({
      status: "error",
      attempts: 1,
      error: { code: "QUOTA_EXCEEDED", data: { asked: true } },
    });
  });

  it("applies the skill's retry policy, each attempt in a fresh sandbox", async () => {
    const execution = await host.executor.execute("flaky", { msg: "again" });

    expect(execution).toMatchObject({ status: "success", attempts: 2, output: { attempt: 2, msg: "again" } });
  });

  // Memory limits under bwrap need a cgroup of the sandbox's own, which only root (or a delegated user) may create.
  it.runIf(process.getuid?.() === 0 || Boolean(process.env.CI))(
    "reports OUT_OF_MEMORY when a handler outgrows sandbox.memoryMb",
    async () => {
      const execution = await host.executor.execute("hog", {});

      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("OUT_OF_MEMORY");
      await expectNothingLeft();
    },
  );

  it("times out a handler that never settles and leaves no process behind", async () => {
    const execution = await host.executor.execute("hang", {}, { timeoutMs: 1_000 });

    expect(execution).toMatchObject({ status: "timeout", error: { code: "TIMEOUT" } });
    await expectNothingLeft();
  });

  it("ends cancelled when the caller aborts, and leaves no process behind", async () => {
    const controller = new AbortController();

    const running = host.executor.execute("hang", {}, { signal: controller.signal, timeoutMs: 60_000 });
    await vi.waitFor(() => expect(processesMentioning(skills.tree.root)).not.toEqual([]), CLEANUP_TIMEOUT);
    controller.abort();
    const execution = await running;

    expect(execution).toMatchObject({ status: "cancelled", error: { code: "CANCELLED" } });
    await expectNothingLeft();
  });
});
