import { fileURLToPath } from "node:url";
import { createPodmanProvider, SandboxRunner } from "@skillbox/sandbox";
import {
  describeWithEngine,
  listSkillboxContainers,
  podmanRequirement,
  removeLeftoverContainers,
} from "@skillbox/test-helpers/engine-availability";
import { describe, expect, it, vi } from "vitest";
import { runCodeBehaviours, useRunCodeHost } from "./run-code-behaviours.js";
import { outputOf, registerRunCode } from "./run-code-host.js";

/** Podman starts take 0.3–1 s each here; removal after a kill takes a little longer. */
const CLEANUP_TIMEOUT = { timeout: 10_000, interval: 100 };
/** Filling 256 MiB, or the pids limit, at half a CPU takes a while on a busy machine. */
const HEAVY_TEST_TIMEOUT = 60_000;

describeWithEngine("run-code (podman)", podmanRequirement(), () => {
  const runner = new SandboxRunner({ provider: createPodmanProvider() });
  const hostOfTest = useRunCodeHost(runner, removeLeftoverContainers);

  /** Resolves once no sandbox of the runner runs and podman holds no container of this process. */
  async function expectNothingLeft(): Promise<void> {
    await vi.waitFor(() => {
      expect(runner.getRunningCount()).toBe(0);
      expect(listSkillboxContainers(process.pid)).toEqual([]);
    }, CLEANUP_TIMEOUT);
  }

  runCodeBehaviours(hostOfTest, expectNothingLeft);

  it("runs the code as nobody, out of sight of the host's files", async () => {
    const thisFile = fileURLToPath(import.meta.url);
    const execution = await hostOfTest().executor.execute("run-code", {
      language: "javascript",
      code: `import { existsSync } from "node:fs";\nconsole.log(JSON.stringify({ uid: process.getuid(), sees: existsSync(${JSON.stringify(thisFile)}) }));`,
    });

    expect(JSON.parse(outputOf(execution).stdout)).toEqual({ uid: 65534, sees: false });
  });

  it("fails with LANGUAGE_UNAVAILABLE, naming sandbox.image, for python on an image without python3", async () => {
    const execution = await hostOfTest().executor.execute("run-code", {
      language: "python",
      code: "print(1)",
    });

    expect(execution).toMatchObject({
      status: "error",
      attempts: 1,
      error: { code: "LANGUAGE_UNAVAILABLE", data: { language: "python", interpreter: "python3" } },
    });
    expect(execution.error?.message).toContain("sandbox.image");
  });

  it(
    "ends a program that outgrows sandbox.memoryMb with SIGKILL, as a result",
    async () => {
      const execution = await hostOfTest().executor.execute("run-code", {
        language: "javascript",
        // Buffers live outside V8's heap: the kernel's OOM killer, not V8, ends the program.
        code: 'console.log("allocating"); const kept = []; for (;;) kept.push(Buffer.alloc(1 << 20, 1));',
      });

      expect(outputOf(execution)).toMatchObject({
        stdout: "allocating\n",
        exitCode: null,
        signal: "SIGKILL",
        timedOut: false,
      });
    },
    HEAVY_TEST_TIMEOUT,
  );

  it(
    "stops a program from starting more processes than sandbox.pidsLimit",
    async () => {
      const execution = await hostOfTest().executor.execute("run-code", {
        language: "javascript",
        code: [
          'import { spawn } from "node:child_process";',
          "let refused = 0;",
          "const started = [];",
          "for (let i = 0; i < 100; i++) {",
          '  const child = spawn("/bin/sh", ["-c", "read line"]);',
          '  child.on("error", () => { refused += 1; });',
          "  started.push(child);",
          "}",
          "setTimeout(() => { console.log(refused); process.exit(0); }, 1000);",
        ].join("\n"),
      });

      const output = outputOf(execution);
      expect(output.exitCode).toBe(0);
      expect(Number(output.stdout)).toBeGreaterThan(0);
    },
    HEAVY_TEST_TIMEOUT,
  );

  it("ends cancelled when the caller aborts, and leaves no container behind", async () => {
    const controller = new AbortController();
    const running = hostOfTest().executor.execute(
      "run-code",
      { language: "javascript", code: "setInterval(() => {}, 1000);" },
      { signal: controller.signal },
    );
    // Abort once the container really runs, not while the engine is still creating it.
    await vi.waitFor(() => expect(listSkillboxContainers(process.pid)).toHaveLength(1), CLEANUP_TIMEOUT);
    controller.abort(new Error("the caller changed its mind"));

    expect(await running).toMatchObject({ status: "cancelled", error: { code: "CANCELLED" } });
    await expectNothingLeft();
  });

  describe("createRunCodeSkill", () => {
    it("applies its settings inside the sandbox, from a module of the plugin folder", async () => {
      const host = hostOfTest();
      registerRunCode(host, new URL("./fixtures/small-limits.ts", import.meta.url), {
        name: "run-code-small",
      });

      const execution = await host.executor.execute("run-code-small", {
        language: "javascript",
        code: 'console.log("0123456789abcdef"); for (;;) {}',
      });

      expect(outputOf(execution)).toMatchObject({ stdout: "01234567", truncated: true, timedOut: true });
    });
  });
});
