import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SkillboxError } from "@skillbox/core";
import { createBwrapProvider, SandboxRunner } from "@skillbox/sandbox";
import { bwrapRequirement, describeWithEngine } from "@skillbox/test-helpers/engine-availability";
import { afterEach, expect, it, vi } from "vitest";
import {
  filesystemAndPrivilegeProbe,
  hardenedProbeResult,
  NETWORK_PROBE,
  nodeCommand,
} from "./isolation-probes.js";

/** bwrap runs the host's own root; the image argument is ignored. */
const NO_IMAGE = "ignored-by-bwrap";
const SECRET = "SKILLBOX_TEST_HOST_SECRET";
const CGROUP_ROOT = "/sys/fs/cgroup";

/** Memory limits need a cgroup of the sandbox's own, which only root (or a delegated user) may create. */
const mayCreateCgroups = process.getuid?.() === 0 || Boolean(process.env.CI);

/**
 * Processes still in the cgroups the provider made for a sandbox (v2, or the v1 hierarchies).
 * Only processes count: an emptied folder that the kernel was still releasing may stay behind.
 */
function processesLeft(id: string): string[] {
  // Folders are named `<owner>.<sandbox id>`, so a start-up sweep can tell whose they are.
  return [
    join(CGROUP_ROOT, "skillbox"),
    ...["pids", "memory", "cpu"].map((controller) => join(CGROUP_ROOT, controller, "skillbox")),
  ]
    .filter((parent) => existsSync(parent))
    .flatMap((parent) =>
      readdirSync(parent)
        .filter((name) => name.endsWith(`.${id}`))
        .map((name) => join(parent, name)),
    )
    .flatMap((folder) => {
      try {
        return readFileSync(join(folder, "cgroup.procs"), "utf8").split("\n").filter(Boolean);
      } catch {
        return []; // removed while we looked
      }
    });
}

/** Waits until no process of the sandbox is left (the last ones may still be exiting). */
async function expectNothingLeft(id: string): Promise<void> {
  await vi.waitFor(() => expect(processesLeft(id)).toEqual([]), { timeout: 5_000, interval: 50 });
}

describeWithEngine("createBwrapProvider", bwrapRequirement(), () => {
  const runner = new SandboxRunner({ provider: createBwrapProvider() });

  afterEach(async () => {
    delete process.env[SECRET];
    await runner.killAll();
  });

  it("runs a command on the host's root and reports the bwrap provider", async () => {
    const result = await runner.run(NO_IMAGE, nodeCommand("console.log(process.versions.node)"));
    expect(result).toMatchObject({
      provider: "bwrap",
      exitCode: 0,
      stdout: `${process.versions.node}\n`,
      killed: false,
      oomKilled: false,
      truncated: false,
    });
    await expectNothingLeft(result.id);
  });

  it("passes the given env and none of the host's unless named in inheritEnv", async () => {
    process.env[SECRET] = "host-only";
    const printEnvironment = nodeCommand("console.log(JSON.stringify(process.env))");

    const isolated = JSON.parse((await runner.run(NO_IMAGE, printEnvironment, { GREETING: "hi" })).stdout);
    const inherited = JSON.parse(
      (await runner.run(NO_IMAGE, printEnvironment, {}, { inheritEnv: [SECRET] })).stdout,
    );

    expect(isolated).toMatchObject({ GREETING: "hi" });
    expect(isolated).not.toHaveProperty(SECRET);
    // Besides the given env, only what the provider sets itself.
    expect(Object.keys(isolated).sort()).toEqual(["GREETING", "HOME", "PATH", "PWD"]);
    expect(inherited).toMatchObject({ [SECRET]: "host-only" });
  });

  it("gives the sandbox the PATH of its env without changing how the host finds bwrap", async () => {
    const result = await runner.run(NO_IMAGE, [process.execPath, "-e", "console.log(process.env.PATH)"], {
      PATH: "/opt/skill/bin",
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: "/opt/skill/bin\n" });
  });

  it("blocks the network (ENETUNREACH)", async () => {
    const result = await runner.run(NO_IMAGE, nodeCommand(NETWORK_PROBE));
    expect(result.stdout.trim()).toBe("ENETUNREACH");
  });

  it("mounts the root read-only, the work dir and /tmp writable, and runs as nobody without privileges", async () => {
    const result = await runner.run(
      NO_IMAGE,
      nodeCommand(filesystemAndPrivilegeProbe("/skillbox-written", "/tmp/workspace")),
    );
    expect(JSON.parse(result.stdout)).toEqual(hardenedProbeResult("/tmp/workspace"));
    expect(existsSync("/skillbox-written")).toBe(false);
  });

  it.runIf(mayCreateCgroups)(
    "reports an OOM kill when the process exceeds memoryMb",
    async () => {
      const result = await runner.run(
        NO_IMAGE,
        nodeCommand("const kept = []; for (;;) kept.push(Buffer.alloc(1 << 20, 1))"),
        {},
        { memoryMb: 64, timeout: 30_000 },
      );
      expect(result).toMatchObject({ exitCode: 137, oomKilled: true, killed: false });
      await expectNothingLeft(result.id);
    },
    60_000,
  );

  it("kills a run at its timeout and leaves nothing behind", async () => {
    const result = await runner.run(
      NO_IMAGE,
      nodeCommand("setInterval(() => {}, 1000)"),
      {},
      { timeout: 1_000 },
    );
    expect(result).toMatchObject({ killed: true, oomKilled: false, exitCode: 137 });
    expect(result.duration).toBeGreaterThanOrEqual(1_000);
    expect(runner.isRunning(result.id)).toBe(false);
    await expectNothingLeft(result.id);
  });

  // Regression: a sandbox killed before bwrap read its environment from descriptor 3 reset that
  // pipe, and the unhandled ECONNRESET crashed the host.
  it("survives sandboxes aborted before bwrap reads their environment", async () => {
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", record);
    try {
      for (let round = 0; round < 10; round++) {
        const controller = new AbortController();
        const running = runner.run(
          NO_IMAGE,
          nodeCommand("setInterval(() => {}, 1000)"),
          { PADDING: "x".repeat(200_000) },
          {
            signal: controller.signal,
          },
        );
        controller.abort();
        expect((await running).killed).toBe(true);
      }
      // Socket errors surface on a later turn of the event loop.
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      process.off("uncaughtException", record);
    }
    expect(uncaught).toEqual([]);
  });

  it("rejects readOnly: false with SANDBOX_CONFIG_INVALID naming the field", async () => {
    const error = await runner
      .run(NO_IMAGE, nodeCommand("0"), {}, { readOnly: false })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SkillboxError);
    expect(error).toMatchObject({ code: "SANDBOX_CONFIG_INVALID" });
    expect((error as SkillboxError).message).toContain("config.readOnly");
    expect(runner.getRunningCount()).toBe(0);
  });
});
