import { hostname } from "node:os";
import { defineInterceptor, type SkillExecution, type SkillRegistration } from "@skillbox/core";
import {
  type ContainerRuntime,
  createContainerRuntime,
  createPodmanProvider,
  SandboxRunner,
} from "@skillbox/sandbox";
import {
  describeWithEngine,
  listSkillboxContainers,
  podmanRequirement,
  removeLeftoverContainers,
  TEST_IMAGE,
} from "@skillbox/test-helpers/engine-availability";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  createRecordingLogger,
  expectProbeLogs,
  type LoadedContainerSkills,
  loadContainerSkills,
  type RecordingLogger,
} from "./fixtures/container-skills.js";
import { nodeCommand } from "./isolation-probes.js";

/** Podman starts take 0.3–1 s each here; cleanup after a kill takes a little longer. */
const CLEANUP_TIMEOUT = { timeout: 10_000, interval: 100 };

/** A command skill: `script` runs as `node -e` in the test image. */
function commandSkill(name: string, script: string, overrides: Partial<SkillRegistration> = {}) {
  return {
    name,
    version: "1.0.0",
    input: { type: "object" },
    handler: "unused-by-command-skills",
    runtime: "container",
    ...overrides,
    sandbox: { image: TEST_IMAGE, command: nodeCommand(script), ...overrides.sandbox },
  } satisfies SkillRegistration;
}

/** Reads the whole of stdin as JSON and calls `body` with it as `input`. */
function withStdinJson(body: string): string {
  return `let text = ""; process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => { const input = JSON.parse(text); ${body} });`;
}

/** Resolves once no sandbox of `runner` runs and podman holds no container of this process. */
async function expectNothingLeft(runner: SandboxRunner): Promise<void> {
  await vi.waitFor(() => {
    expect(runner.getRunningCount()).toBe(0);
    expect(listSkillboxContainers(process.pid)).toEqual([]);
  }, CLEANUP_TIMEOUT);
}

describeWithEngine("createContainerRuntime (podman)", podmanRequirement(), () => {
  const runner = new SandboxRunner({ provider: createPodmanProvider() });
  let runtime: ContainerRuntime;
  let host: TemporaryHost;
  let logs: RecordingLogger;
  let skills: LoadedContainerSkills | undefined;

  beforeEach(() => {
    logs = createRecordingLogger();
    runtime = createContainerRuntime({ runner, defaultImage: TEST_IMAGE });
    host = createTemporaryHost({ runtimes: [runtime], logger: logs.logger });
  });

  afterEach(async () => {
    // Closing the host closes the runtime (and its warm pools).
    await host.dispose();
    skills?.cleanup();
    skills = undefined;
    await runner.killAll();
    removeLeftoverContainers();
  });

  async function withFolderSkills(): Promise<LoadedContainerSkills> {
    skills = await loadContainerSkills(host);
    return skills;
  }

  describe("command skills", () => {
    it("sends the input on stdin, parses stdout as the output and forwards stderr to the logger", async () => {
      host.registry.register(
        commandSkill(
          "double",
          withStdinJson(
            'console.error("a plain stderr line");' +
              'console.error(JSON.stringify({ level: "warn", message: "a log entry", count: input.n }));' +
              "console.log(JSON.stringify({ doubled: input.n * 2, skill: process.env.SKILLBOX_SKILL }));",
          ),
          { output: { type: "object", required: ["doubled"] } },
        ),
      );

      const execution = await host.executor.execute("double", { n: 21 });

      expect(execution).toMatchObject({
        status: "success",
        output: { doubled: 42, skill: "double@1.0.0" },
        error: null,
        attempts: 1,
      });
      const ofThisExecution = logs.entries.filter((entry) => entry.fields.executionId === execution.id);
      expect(ofThisExecution).toEqual(
        expect.arrayContaining([
          {
            level: "info",
            message: "a plain stderr line",
            fields: expect.objectContaining({ stream: "stderr" }),
          },
          { level: "warn", message: "a log entry", fields: expect.objectContaining({ count: 21 }) },
        ]),
      );
    });

    it("turns a non-zero exit into HANDLER_ERROR quoting the end of stderr", async () => {
      host.registry.register(
        commandSkill(
          "crash",
          'console.error("noise ".repeat(2000)); console.error("the last words"); process.exit(3)',
        ),
      );

      const execution = await host.executor.execute("crash", {});

      expect(execution.status).toBe("error");
      expect(execution.error).toMatchObject({
        code: "HANDLER_ERROR",
        data: { exitCode: 3, provider: "podman" },
      });
      expect(execution.error?.message).toContain("exited with code 3");
      expect(execution.error?.message).toContain("the last words");
      // Only the tail is quoted, not 12 kB of noise.
      expect(execution.error?.message.length).toBeLessThan(3_000);
    });

    it("turns stdout that is not JSON into HANDLER_ERROR", async () => {
      host.registry.register(commandSkill("chatty", 'console.log("hello, this is not JSON")'));

      const execution = await host.executor.execute("chatty", {});

      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("HANDLER_ERROR");
      expect(execution.error?.message).toContain("not JSON");
    });

    it("fails with SANDBOX_FAILED, without retrying, when the image does not exist", async () => {
      host.registry.register(
        commandSkill("imageless", "console.log(1)", {
          sandbox: { image: "localhost/skillbox-no-such-image:never" },
          retry: { maxAttempts: 3, initialDelayMs: 10 },
        }),
      );

      const execution = await host.executor.execute("imageless", {});

      expect(execution).toMatchObject({ status: "error", attempts: 1, error: { code: "SANDBOX_FAILED" } });
      expect(execution.error?.message).toContain("localhost/skillbox-no-such-image:never");
      expect(execution.error?.message).toContain("is not in podman's image store");
      expect(await host.executor.getExecution(execution.id)).toMatchObject({ status: "error", attempts: 1 });
    });

    it("reports OUT_OF_MEMORY when the command outgrows sandbox.memoryMb", async () => {
      host.registry.register(
        commandSkill(
          "memory-bomb",
          // Buffers live outside V8's heap, so the kernel's OOM killer, not V8, ends the process.
          "const kept = []; for (;;) kept.push(Buffer.alloc(1 << 20, 1));",
          { sandbox: { memoryMb: 64 } },
        ),
      );

      const execution = await host.executor.execute("memory-bomb", {});

      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("OUT_OF_MEMORY");
      expect(execution.error?.message).toContain("64 MiB");
    });

    it("fails with OUTPUT_INVALID when stdout exceeds the sandbox's output cap", async () => {
      host.registry.register(
        commandSkill("flood", 'process.stdout.write(JSON.stringify("x".repeat(2 * 1024 * 1024)))'),
      );

      const execution = await host.executor.execute("flood", {});

      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("OUTPUT_INVALID");
      expect(execution.error?.message).toContain("output limit");
    });

    it("times out a command that never ends and leaves no container behind", async () => {
      host.registry.register(commandSkill("forever", "setInterval(() => {}, 1000)"));

      const execution = await host.executor.execute("forever", {}, { timeoutMs: 1_000 });

      expect(execution).toMatchObject({ status: "timeout", error: { code: "TIMEOUT" } });
      await expectNothingLeft(runner);
    });
  });

  describe("handler skills (no command)", () => {
    it("runs a TypeScript defineSkill handler from a skill folder as nobody, without sight of the host", async () => {
      await withFolderSkills();

      const execution = await host.executor.execute("probe", { msg: "hello", hostPath: "/work" });

      expect(execution.status).toBe("success");
      expect(execution.output).toEqual({
        reply: "HELLO!",
        uid: 65534,
        hostname: expect.any(String),
        seesHostPath: false,
        skill: "probe@1.0.0",
        attempt: 1,
        executionId: execution.id,
      });
      expect(execution.output.hostname).not.toBe(hostname());
      // console.log went to stderr, and the handler's own log entries keep their level and fields.
      await expectProbeLogs(logs, execution.id);
    });

    it("delivers a SkillboxError thrown in the handler with its own code and data", async () => {
      await withFolderSkills();

      const execution = await host.executor.execute("probe", { msg: "x", failWith: "QUOTA_EXCEEDED" });

      expect(execution).toMatchObject({
        status: "error",
        attempts: 1,
        error: {
          code: "QUOTA_EXCEEDED",
          message: "probe was asked to fail with QUOTA_EXCEEDED",
          data: { asked: true },
        },
      });
    });

    it("turns a handler that exits the process into HANDLER_ERROR quoting its stderr", async () => {
      await withFolderSkills();

      const execution = await host.executor.execute("probe", { msg: "x", exitWith: 7 });

      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("HANDLER_ERROR");
      expect(execution.error?.message).toContain("exited with code 7");
      expect(execution.error?.message).toContain("exiting on purpose");
    });

    it("reports OUT_OF_MEMORY when a handler outgrows sandbox.memoryMb", async () => {
      await withFolderSkills();

      const execution = await host.executor.execute("hog", {});

      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("OUT_OF_MEMORY");
      expect(execution.error?.message).toContain("128 MiB");
    });

    it("fails with OUTPUT_INVALID, as a command skill does, when the handler's output exceeds the output cap", async () => {
      await withFolderSkills();

      // The result line (2 MiB) is longer than the default 1 MiB cap of the sandbox's stdout.
      const execution = await host.executor.execute("hog", { outputMb: 2 });

      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("OUTPUT_INVALID");
      expect(execution.error?.message).toContain("output limit");
    });

    it("times out a handler that never settles and leaves no container behind", async () => {
      await withFolderSkills();

      const execution = await host.executor.execute("hang", {}, { timeoutMs: 1_000 });

      expect(execution).toMatchObject({ status: "timeout", error: { code: "TIMEOUT" }, attempts: 1 });
      await expectNothingLeft(runner);
    });

    it("ends cancelled when the caller aborts, and leaves no container behind", async () => {
      await withFolderSkills();
      const controller = new AbortController();

      const running = host.executor.execute("hang", {}, { signal: controller.signal, timeoutMs: 60_000 });
      // Abort once the container really runs, not while the engine is still creating it.
      await vi.waitFor(() => expect(listSkillboxContainers(process.pid)).toHaveLength(1), CLEANUP_TIMEOUT);
      controller.abort(new Error("the caller changed its mind"));
      const execution = await running;

      expect(execution).toMatchObject({ status: "cancelled", error: { code: "CANCELLED" } });
      expect((await host.executor.getExecution(execution.id))?.status).toBe("cancelled");
      await expectNothingLeft(runner);
    });
  });

  describe("executor features", () => {
    it("applies retries, interceptors and the audit trail to container skills unchanged", async () => {
      await withFolderSkills();
      const seenByAfter: unknown[] = [];
      host.executor.use(
        defineInterceptor({
          name: "rewrite-flaky",
          match: { names: "flaky" },
          before: (context) => ({ input: { msg: `${(context.input as { msg: string }).msg}, rewritten` } }),
          after: (_context, result) => {
            seenByAfter.push(result.output);
            return { output: { ...(result.output as object), intercepted: true } };
          },
        }),
      );

      const execution = await host.executor.execute("flaky", { msg: "original" });

      expect(execution).toMatchObject({
        status: "success",
        attempts: 2,
        output: { attempt: 2, msg: "original, rewritten", intercepted: true },
      });
      expect(seenByAfter).toEqual([{ attempt: 2, msg: "original, rewritten" }]);
      const row = (await host.executor.getExecution(execution.id)) as SkillExecution;
      expect(row).toMatchObject({
        status: "success",
        attempts: 2,
        error: null,
        output: { attempt: 2, msg: "original, rewritten", intercepted: true },
        finishedAt: expect.any(String),
      });
    });
  });

  describe("warm pool", () => {
    it("pre-starts sandboxes, gives each execution a fresh one, refills, and kills idle ones on close", async () => {
      await withFolderSkills();
      const skill = host.registry.getSkill("marker");
      if (skill === undefined) throw new Error("the marker fixture did not load");
      expect(skill.sandbox?.warmPool).toBe(1);
      const start = vi.spyOn(runner, "start");

      await runtime.warmUp(skill);
      expect(runner.getRunningCount()).toBe(1);
      expect(start).toHaveBeenCalledTimes(1);

      const hostnames = new Set<string>();
      for (let run = 1; run <= 3; run++) {
        const execution = await host.executor.execute("marker", {});
        expect(execution.status).toBe("success");
        // A sandbox is never reused: no marker left by an earlier job.
        expect(execution.output).toMatchObject({ existed: false });
        hostnames.add((execution.output as { hostname: string }).hostname);
        // The execution took the warm sandbox (no cold start) and the pool refills by itself with
        // exactly one replacement, once the used sandbox is gone or while it goes.
        await vi.waitFor(() => {
          expect(start).toHaveBeenCalledTimes(run + 1);
          expect(runner.getRunningCount()).toBe(1);
        }, CLEANUP_TIMEOUT);
        // Only waits for the replacement to be ready: it starts nothing more.
        await runtime.warmUp(skill);
        expect(start).toHaveBeenCalledTimes(run + 1);
        expect(runner.getRunningCount()).toBe(1);
      }
      expect(hostnames.size).toBe(3);
      start.mockRestore();

      await host.close();
      await expectNothingLeft(runner);
    });

    it("drops sandboxes warmed with the old code when the skill's code changes", async () => {
      const loaded = await withFolderSkills();
      const before = host.registry.getSkill("marker");
      if (before === undefined) throw new Error("the marker fixture did not load");
      await runtime.warmUp(before);
      expect(runner.getRunningCount()).toBe(1);

      // An edit, as hot reload sees it: the package syncs and the skill gets a new content hash.
      loaded.tree.write(
        "plugins/marker/index.js",
        'export default function marker() {\n  return { existed: false, hostname: "edited" };\n}\n',
      );
      await loaded.loader.syncPackage(loaded.tree.path("plugins/marker"));
      const after = host.registry.getSkill("marker");
      expect(after?.contentHash).not.toBe(before.contentHash);

      const execution = await host.executor.execute("marker", {});
      expect(execution.output).toEqual({ existed: false, hostname: "edited" });
      // The stale warm sandbox is killed; only the new version's replacement may remain.
      await vi.waitFor(() => expect(runner.getRunningCount()).toBeLessThanOrEqual(1), CLEANUP_TIMEOUT);
    });

    it("kills a warm sandbox that is still starting when the host closes", async () => {
      await withFolderSkills();
      const skill = host.registry.getSkill("stuck");
      if (skill === undefined) throw new Error("the stuck fixture did not load");

      // The module of `stuck` never finishes loading: its warm sandbox never becomes ready.
      const warming = runtime.warmUp(skill);
      await vi.waitFor(() => expect(listSkillboxContainers(process.pid)).toHaveLength(1), CLEANUP_TIMEOUT);
      await host.close();
      await warming;

      await expectNothingLeft(runner);
    });
  });
});
