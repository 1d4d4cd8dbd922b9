import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { SkillboxError } from "@skillbox/core";
import {
  createPodmanProvider,
  type SandboxResult,
  SandboxRunner,
  type StartedSandbox,
  sandboxRunner,
} from "@skillbox/sandbox";
import {
  describeWithEngine,
  listSkillboxContainers,
  podmanRequirement,
  removeLeftoverContainers,
  TEST_IMAGE,
} from "@skillbox/test-helpers/engine-availability";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  filesystemAndPrivilegeProbe,
  hardenedProbeResult,
  NETWORK_PROBE,
  nodeCommand,
} from "./isolation-probes.js";

const BUILT_PACKAGE = fileURLToPath(new URL("../dist/index.js", import.meta.url));

/** A node one-liner inside the sandbox. */
/** Prints "ready" once it runs, then idles until killed. */
const IDLE = nodeCommand('console.log("ready"); setInterval(() => {}, 1000)');

function newRunner(): SandboxRunner {
  return new SandboxRunner({ provider: createPodmanProvider() });
}

/** Resolves once an {@link IDLE} sandbox printed "ready": its container is running. */
async function untilReady(sandbox: StartedSandbox): Promise<void> {
  expect(await sandbox.readLine()).toBe("ready");
}

/** Whether podman still knows a container of that name. */
function containerExists(id: string): boolean {
  return spawnSync("podman", ["container", "exists", id], { stdio: "ignore" }).status === 0;
}

describe("SandboxRunner (config validation)", () => {
  it("rejects a bad config field with SANDBOX_CONFIG_INVALID naming the field", async () => {
    const error = await newRunner()
      .run(TEST_IMAGE, nodeCommand("0"), {}, { memoryMb: -1 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SkillboxError);
    expect(error).toMatchObject({ code: "SANDBOX_CONFIG_INVALID" });
    expect((error as SkillboxError).message).toContain("config.memoryMb");
  });

  it("rejects an unknown config field, naming it", async () => {
    const error = await newRunner()
      .run(TEST_IMAGE, nodeCommand("0"), {}, { memory: 64 } as never)
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "SANDBOX_CONFIG_INVALID" });
    expect((error as SkillboxError).message).toContain("config.memory");
  });

  it("rejects an env variable whose name is not a valid variable name", async () => {
    const error = await newRunner()
      .run(TEST_IMAGE, nodeCommand("0"), { "1-BAD NAME": "x" })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "SANDBOX_CONFIG_INVALID" });
    expect((error as SkillboxError).message).toContain('"1-BAD NAME"');
  });
});

describeWithEngine("SandboxRunner (podman)", podmanRequirement(), () => {
  const runner = newRunner();

  afterEach(async () => {
    await runner.killAll();
    removeLeftoverContainers();
  });

  it("runs the reference example and returns every result field", async () => {
    const result = await runner.run(
      TEST_IMAGE,
      nodeCommand("console.log(JSON.parse(process.env.INPUT_DATA).foo)"),
      { INPUT_DATA: JSON.stringify({ foo: "bar" }) },
      { timeout: 15_000 },
    );
    expect(result).toEqual({
      id: expect.stringMatching(/^skillbox-/),
      provider: "podman",
      exitCode: 0,
      stdout: "bar\n",
      stderr: "",
      duration: expect.any(Number),
      killed: false,
      oomKilled: false,
      truncated: false,
    } satisfies Record<keyof SandboxResult, unknown>);
    expect(result.duration).toBeGreaterThan(0);
    expect(containerExists(result.id)).toBe(false);
  });

  it("reports the process's exit code and stderr", async () => {
    const result = await runner.run(TEST_IMAGE, nodeCommand('console.error("bad input"); process.exit(3)'));
    expect(result).toMatchObject({ exitCode: 3, stderr: "bad input\n", killed: false, oomKilled: false });
  });

  describe("environment", () => {
    const SECRET = "SKILLBOX_TEST_HOST_SECRET";
    const printEnvironment = nodeCommand("console.log(JSON.stringify(process.env))");

    afterEach(() => {
      delete process.env[SECRET];
    });

    it("passes the given env and none of the host's", async () => {
      process.env[SECRET] = "host-only";
      const result = await runner.run(TEST_IMAGE, printEnvironment, { GREETING: "hello world", EMPTY: "" });
      const environment = JSON.parse(result.stdout) as Record<string, string>;
      expect(environment).toMatchObject({ GREETING: "hello world", EMPTY: "" });
      expect(environment).not.toHaveProperty(SECRET);
      // Anything else comes from the image or the engine, never from the host.
      const engineDefaults = ["PATH", "HOME", "HOSTNAME", "TERM", "container"];
      const unexpected = Object.keys(environment).filter(
        (name) => !["GREETING", "EMPTY", ...engineDefaults].includes(name),
      );
      expect(unexpected).toEqual([]);
    });

    it("passes a host variable named in config.inheritEnv", async () => {
      process.env[SECRET] = "inherited value";
      const result = await runner.run(TEST_IMAGE, printEnvironment, {}, { inheritEnv: [SECRET] });
      expect(JSON.parse(result.stdout)).toMatchObject({ [SECRET]: "inherited value" });
    });
  });

  it("delivers config.stdin to the process and closes it", async () => {
    const result = await runner.run(
      TEST_IMAGE,
      nodeCommand(
        'let text = ""; process.stdin.on("data", (c) => (text += c)).on("end", () => console.log(text.toUpperCase()))',
      ),
      {},
      { stdin: "job for the sandbox" },
    );
    expect(result.stdout).toBe("JOB FOR THE SANDBOX\n");
  });

  it("blocks the network by default (ENETUNREACH)", async () => {
    const result = await runner.run(TEST_IMAGE, nodeCommand(NETWORK_PROBE));
    expect(result.stdout.trim()).toBe("ENETUNREACH");
  });

  it("mounts the root read-only, the work dir and /tmp writable, and runs as nobody without privileges", async () => {
    const result = await runner.run(
      TEST_IMAGE,
      nodeCommand(filesystemAndPrivilegeProbe("/written", "/workspace")),
    );
    expect(JSON.parse(result.stdout)).toEqual(hardenedProbeResult("/workspace"));
  });

  it("reports an OOM kill when the process exceeds memoryMb", async () => {
    const result = await runner.run(
      TEST_IMAGE,
      nodeCommand("const kept = []; for (;;) kept.push(Buffer.alloc(1 << 20, 1))"),
      {},
      { memoryMb: 64, timeout: 30_000 },
    );
    expect(result).toMatchObject({ exitCode: 137, oomKilled: true, killed: false });
  }, 60_000);

  it("contains a fork bomb with pidsLimit", async () => {
    const result = await runner.run(
      TEST_IMAGE,
      ["sh", "-c", "f() { f | f; }; f"],
      {},
      { pidsLimit: 32, timeout: 3_000 },
    );
    // The bomb either collapses once forks fail or runs into the time limit; either way it comes back.
    expect(result.stderr).toContain("Cannot fork");
    expect(result.duration).toBeLessThan(15_000);
    expect(containerExists(result.id)).toBe(false);
    // The host can still start processes.
    expect(spawnSync(process.execPath, ["-e", "0"]).status).toBe(0);
  }, 60_000);

  it("kills a run at its timeout and leaves no container", async () => {
    const result = await runner.run(
      TEST_IMAGE,
      nodeCommand("setInterval(() => {}, 1000)"),
      {},
      { timeout: 1_000 },
    );
    expect(result).toMatchObject({ killed: true, oomKilled: false, exitCode: 137 });
    expect(result.duration).toBeGreaterThanOrEqual(1_000);
    expect(listSkillboxContainers()).not.toContain(result.id);
    expect(runner.isRunning(result.id)).toBe(false);
  });

  // Both shapes: a reader of the live output must not keep what the capture drops, line by line or not.
  it.each([
    ["as one endless line", "a".repeat(1024)],
    ["as 100-byte lines", `${"a".repeat(99)}\n`],
  ])(
    "truncates a 200 MB stdout flood %s at maxOutputBytes without keeping it on the host",
    async (_shape, line) => {
      const floodBytes = 200 * 1024 * 1024;
      const maxOutputBytes = 64 * 1024;
      const rssBefore = process.memoryUsage().rss;
      let rssPeak = rssBefore;
      const sampler = setInterval(() => {
        rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
      }, 10);
      try {
        const result = await runner.run(
          TEST_IMAGE,
          nodeCommand(`
          const chunk = Buffer.from(${JSON.stringify(line)}.repeat(1024));
          let left = ${floodBytes} / chunk.length;
          const write = () => {
            while (left-- > 0) if (!process.stdout.write(chunk)) return process.stdout.once("drain", write);
          };
          write();
        `),
          {},
          { maxOutputBytes, timeout: 60_000 },
        );
        // Exit 0: the writer got rid of every byte, so the runner drained them all.
        expect(result).toMatchObject({ exitCode: 0, truncated: true, killed: false });
        expect(result.stdout).toBe(
          line.repeat(Math.ceil(maxOutputBytes / line.length)).slice(0, maxOutputBytes),
        );
      } finally {
        clearInterval(sampler);
      }
      expect(rssPeak - rssBefore).toBeLessThan(100 * 1024 * 1024);
    },
    90_000,
  );

  it("killAll() kills every running sandbox and leaves no container", async () => {
    const runs = [runner.run(TEST_IMAGE, IDLE), runner.run(TEST_IMAGE, IDLE)];
    await vi.waitFor(() => expect(runner.getRunningCount()).toBe(2), { timeout: 15_000 });
    await vi.waitFor(() => expect(listSkillboxContainers(process.pid)).toHaveLength(2), {
      timeout: 15_000,
      interval: 100,
    });

    await runner.killAll();
    const results = await Promise.all(runs);

    expect(results.map((result) => result.killed)).toEqual([true, true]);
    expect(runner.getRunningCount()).toBe(0);
    const left = listSkillboxContainers();
    for (const result of results) expect(left).not.toContain(result.id);
  });

  it("kill(id) kills a started sandbox", async () => {
    const sandbox = await runner.start(TEST_IMAGE, IDLE);
    sandbox.send();
    await untilReady(sandbox);
    expect(runner.isRunning(sandbox.id)).toBe(true);

    await runner.kill(sandbox.id);

    const result = await sandbox.result;
    expect(result).toMatchObject({ id: sandbox.id, killed: true, oomKilled: false });
    expect(sandbox.running).toBe(false);
    expect(runner.isRunning(sandbox.id)).toBe(false);
    expect(containerExists(sandbox.id)).toBe(false);
  });

  describe("on host SIGTERM", () => {
    let host: ChildProcess | undefined;
    let folder: string | undefined;
    let hostSandboxId: string | undefined;

    afterEach(() => {
      host?.kill("SIGKILL");
      // The host's container carries the host's pid as its label: remove it by name if it survived.
      if (hostSandboxId !== undefined) {
        spawnSync("podman", ["rm", "--force", "--time", "0", hostSandboxId], { stdio: "ignore" });
      }
      if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
      host = undefined;
      folder = undefined;
      hostSandboxId = undefined;
    });

    /**
     * Starts a host process on the built package that runs one idle sandbox, and resolves with
     * the sandbox id once its container runs. `extraLines` run after that.
     */
    async function startHost(...extraLines: string[]): Promise<{ id: string; exited: Promise<unknown[]> }> {
      if (!existsSync(BUILT_PACKAGE))
        throw new Error(`${BUILT_PACKAGE} is missing: run \`pnpm build\` first`);
      folder = mkdtempSync(join(tmpdir(), "skillbox-sigterm-"));
      const script = join(folder, "host.mjs");
      writeFileSync(
        script,
        [
          `import { createPodmanProvider, SandboxRunner } from ${JSON.stringify(BUILT_PACKAGE)};`,
          "const runner = new SandboxRunner({ provider: createPodmanProvider() });",
          `const sandbox = await runner.start(${JSON.stringify(TEST_IMAGE)}, ${JSON.stringify(IDLE)}, {}, { timeout: 60000 });`,
          "sandbox.send();",
          'if ((await sandbox.readLine()) === "ready") console.log(sandbox.id);',
          ...extraLines,
        ].join("\n"),
      );
      const child = spawn(process.execPath, [script], { stdio: ["ignore", "pipe", "inherit"] });
      host = child;
      const exited = once(child, "exit");
      const id = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once("line", resolve);
        child.once("exit", (code) =>
          reject(new Error(`the host script exited (${code}) before its sandbox ran`)),
        );
      });
      hostSandboxId = id;
      return { id, exited };
    }

    it("kills the process's running sandboxes", async () => {
      const { id, exited } = await startHost();
      expect(containerExists(id)).toBe(true);

      host!.kill("SIGTERM");
      await exited;

      expect(containerExists(id)).toBe(false);
    });

    it("still ends a host that has no SIGTERM handler of its own", async () => {
      // A timer keeps the event loop alive, as a server's listening socket would.
      const { id, exited } = await startHost("setInterval(() => {}, 1000);");

      host!.kill("SIGTERM");
      let deadline: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        exited.then(([code, signal]) => ({ code, signal })),
        new Promise((resolve) => {
          deadline = setTimeout(resolve, 10_000, "still running 10 s after SIGTERM");
        }),
      ]);
      clearTimeout(deadline);

      // Node's default for SIGTERM is to die of it; the runner must re-raise after its cleanup.
      expect(outcome).toEqual({ code: null, signal: "SIGTERM" });
      expect(containerExists(id)).toBe(false);
    });
  });
});

describeWithEngine("sandboxRunner", podmanRequirement(), () => {
  it("runs the reference example with the provider it resolves", async () => {
    const result = await sandboxRunner.run(
      TEST_IMAGE,
      nodeCommand("console.log(JSON.parse(process.env.INPUT_DATA).foo)"),
      { INPUT_DATA: JSON.stringify({ foo: "bar" }) },
      { timeout: 15_000 },
    );
    expect(result).toMatchObject({
      provider: process.env.SKILLBOX_SANDBOX_RUNTIME?.trim() || "podman",
      exitCode: 0,
      stdout: "bar\n",
      killed: false,
    });
  });
});
