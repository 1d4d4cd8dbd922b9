import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createBwrapProvider, createPodmanProvider, SANDBOX_LABEL, SandboxRunner } from "@skillbox/sandbox";
import { currentSandboxOwner, formatSandboxOwner } from "@skillbox/sandbox/internal";
import {
  bwrapRequirement,
  containersLabelled,
  type DockerApiService,
  deadPid,
  describeWithEngine,
  dockerRequirement,
  listSkillboxContainers,
  podmanRequirement,
  removeContainersLabelled,
  startDockerApiService,
  startLabelledContainer,
  TEST_IMAGE,
} from "@skillbox/test-helpers/engine-availability";
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";

const BUILT_PACKAGE = fileURLToPath(new URL("../dist/index.js", import.meta.url));
const CGROUP_ROOT = "/sys/fs/cgroup";
const SECRET_VALUE = `secret-${randomUUID()}`;
/** Prints "ready" and the secret it was given, then idles until killed. */
const IDLE_SCRIPT = 'console.log("ready " + process.env.SANDBOX_SECRET); setInterval(() => {}, 1000)';
/** Generous: a loaded 2-core machine takes a few seconds to remove a container. */
const GONE_WITHIN_MS = 20_000;

interface HostProcess {
  child: ChildProcess;
  exited: Promise<unknown[]>;
  /** The id of the sandbox the host started, once it runs. */
  sandboxId: string;
  /** What the sandbox printed first. */
  firstLine: string;
}

const started: ChildProcess[] = [];
const folders: string[] = [];
const testContainers: string[] = [];

afterEach(() => {
  for (const child of started.splice(0)) child.kill("SIGKILL");
  for (const label of testContainers.splice(0)) removeContainersLabelled(label);
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/**
 * Starts a host process on the built package whose runner (made by `providerSource`) starts
 * one idle sandbox with a secret in its environment, and resolves once the sandbox runs.
 */
async function startHost(providerSource: string, config: Record<string, unknown> = {}): Promise<HostProcess> {
  if (!existsSync(BUILT_PACKAGE)) throw new Error(`${BUILT_PACKAGE} is missing: run \`pnpm build\` first`);
  const folder = mkdtempSync(join(tmpdir(), "skillbox-host-death-"));
  folders.push(folder);
  const script = join(folder, "host.mjs");
  writeFileSync(
    script,
    [
      `import { createBwrapProvider, createDockerProvider, createPodmanProvider, SandboxRunner } from ${JSON.stringify(BUILT_PACKAGE)};`,
      `const runner = new SandboxRunner({ provider: ${providerSource} });`,
      `const sandbox = await runner.start(${JSON.stringify(TEST_IMAGE)}, ["node", "-e", ${JSON.stringify(IDLE_SCRIPT)}], { SANDBOX_SECRET: ${JSON.stringify(SECRET_VALUE)} }, ${JSON.stringify({ timeout: 0, ...config })});`,
      "sandbox.send();",
      "console.log(JSON.stringify({ id: sandbox.id, line: await sandbox.readLine() }));",
      // A server's listening socket would keep the host alive the same way.
      "setInterval(() => {}, 1000);",
    ].join("\n"),
  );
  const child = spawn(process.execPath, [script], { stdio: ["ignore", "pipe", "inherit"] });
  started.push(child);
  const exited = once(child, "exit");
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) =>
      reject(new Error(`the host script exited (${code}) before its sandbox ran`)),
    );
  });
  const { id, line: firstLine } = JSON.parse(line) as { id: string; line: string };
  return { child, exited, sandboxId: id, firstLine };
}

/** Files of the temp folder that belong to a sandbox (its env file, say) or hold its secret. */
function temporaryFilesOf(sandboxId: string): string[] {
  return readdirSync(tmpdir()).filter((name) => {
    if (name.includes(sandboxId)) return true;
    const path = join(tmpdir(), name);
    try {
      return readFileSync(path, "utf8").includes(SECRET_VALUE);
    } catch {
      return false; // a folder, or a file of someone else's
    }
  });
}

/** Pids of processes whose command line holds `marker`. */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)) pids.push(Number(entry));
    } catch {
      // It ended while we looked.
    }
  }
  return pids;
}

/** Pids of processes whose environment holds `marker`. */
function processesWithEnvironment(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "utf8").includes(marker)) pids.push(Number(entry));
    } catch {
      // It ended while we looked, or it is not ours to read.
    }
  }
  return pids;
}

/** cgroup folders of a sandbox (they are named `<owner>.<sandbox id>`). */
function cgroupFoldersOf(sandboxId: string): string[] {
  return [
    join(CGROUP_ROOT, "skillbox"),
    ...["pids", "memory", "cpu"].map((name) => join(CGROUP_ROOT, name, "skillbox")),
  ]
    .filter((parent) => existsSync(parent))
    .flatMap((parent) =>
      readdirSync(parent)
        .filter((name) => name.endsWith(`.${sandboxId}`))
        .map((name) => join(parent, name)),
    );
}

/** Starts a host on `providerSource`, kills it with SIGKILL and expects its container and secrets gone. */
async function expectContainerRemovedAfterKill(providerSource: string): Promise<void> {
  const host = await startHost(providerSource);
  const owner = host.child.pid ?? 0;
  testContainers.push(`${SANDBOX_LABEL}=${owner}`);
  expect(host.firstLine).toBe(`ready ${SECRET_VALUE}`);
  expect(listSkillboxContainers(owner)).toEqual([host.sandboxId]);
  // The secret reached the sandbox without a file on disk (nor in argv: see provider-argv).
  expect(temporaryFilesOf(host.sandboxId)).toEqual([]);

  host.child.kill("SIGKILL");
  await host.exited;

  await vi.waitFor(() => expect(listSkillboxContainers(owner)).toEqual([]), {
    timeout: GONE_WITHIN_MS,
    interval: 250,
  });
  expect(temporaryFilesOf(host.sandboxId)).toEqual([]);
}

describeWithEngine("SandboxRunner after its host is killed (podman)", podmanRequirement(), () => {
  it("removes the container once the host dies of SIGKILL, and leaves no env file", async () => {
    await expectContainerRemovedAfterKill("createPodmanProvider()");
  }, 60_000);
});

describeWithEngine(
  "SandboxRunner after its host is killed (docker through podman's API)",
  dockerRequirement(),
  () => {
    let service: DockerApiService | undefined;

    beforeAll(async () => {
      service = await startDockerApiService();
    }, 30_000);

    afterAll(async () => {
      await service?.stop();
    });

    it("removes the container once the host dies of SIGKILL: the watchdog finds the engine through DOCKER_HOST", async () => {
      const clientEnv = JSON.stringify({ DOCKER_HOST: service?.dockerHost });
      await expectContainerRemovedAfterKill(`createDockerProvider({ clientEnv: ${clientEnv} })`);
    }, 60_000);
  },
);

describeWithEngine("SandboxRunner's host-death watchdog (podman)", podmanRequirement(), () => {
  it("forgets a sandbox that could not be planned, and so exits once idle", async () => {
    // The watchdog inherits the CLI's environment: the marker finds this provider's watchdog.
    const marker = `SKILLBOX_TEST_WATCHDOG=${randomUUID()}`;
    const [name = "", value = ""] = marker.split("=");
    const runner = new SandboxRunner({
      provider: createPodmanProvider({ clientEnv: { [name]: value } }),
      removeOrphansOnStart: false,
    });
    // A multi-line PATH is refused when the sandbox is planned, after the watchdog took its id.
    await expect(
      runner.start(TEST_IMAGE, ["node", "-e", "0"], { PATH: "/usr/bin\n/bin" }),
    ).rejects.toMatchObject({ code: "SANDBOX_CONFIG_INVALID" });
    expect(processesWithEnvironment(marker)).toHaveLength(1);
    expect(runner.getRunningCount()).toBe(0);
    // Nothing left to watch: the watchdog exits after its idle delay instead of waiting forever.
    await vi.waitFor(() => expect(processesWithEnvironment(marker)).toEqual([]), {
      timeout: GONE_WITHIN_MS,
      interval: 250,
    });
  }, 60_000);

  it("is one process for every provider of the same engine in a host", async () => {
    const marker = `SKILLBOX_TEST_WATCHDOG=${randomUUID()}`;
    const [name = "", value = ""] = marker.split("=");
    const runners = [1, 2, 3].map(
      () =>
        new SandboxRunner({
          provider: createPodmanProvider({ clientEnv: { [name]: value } }),
          removeOrphansOnStart: false,
        }),
    );
    for (const runner of runners) {
      // Refused when planned, after each provider had its watchdog take the id: no container runs.
      await expect(
        runner.start(TEST_IMAGE, ["node", "-e", "0"], { PATH: "/usr/bin\n/bin" }),
      ).rejects.toMatchObject({ code: "SANDBOX_CONFIG_INVALID" });
    }
    expect(processesWithEnvironment(marker)).toHaveLength(1);
    await vi.waitFor(() => expect(processesWithEnvironment(marker)).toEqual([]), {
      timeout: GONE_WITHIN_MS,
      interval: 250,
    });
  }, 60_000);
});

describeWithEngine("SandboxRunner's start-up sweep (podman)", podmanRequirement(), () => {
  it("removes the containers of dead owners and keeps those of live ones", async () => {
    const testLabel = `io.skillbox.test=${randomUUID()}`;
    testContainers.push(testLabel);
    const here = currentSandboxOwner();
    const dead = startLabelledContainer(formatSandboxOwner({ ...here, pid: await deadPid() }), testLabel);
    // Our own pid with another start time: the pid was reused, its owner is dead.
    const reused = startLabelledContainer(formatSandboxOwner({ ...here, startTime: "1" }), testLabel);
    const live = startLabelledContainer(formatSandboxOwner(here), testLabel);
    // A pid namespace that cannot be judged from here (another container sharing the engine).
    const elsewhere = startLabelledContainer(
      formatSandboxOwner({ ...here, pidNamespace: "pid:[1]", pid: await deadPid() }),
      testLabel,
    );
    const [deadName, reusedName, liveName, elsewhereName] = [dead, reused, live, elsewhere];
    expect(containersLabelled(testLabel)).toEqual([deadName, reusedName, liveName, elsewhereName].sort());

    // A new runner sweeps by itself once its provider is resolved.
    const runner = new SandboxRunner({ provider: createPodmanProvider() });
    await runner.getProvider();
    await vi.waitFor(() => expect(containersLabelled(testLabel)).toEqual([liveName, elsewhereName].sort()), {
      timeout: GONE_WITHIN_MS,
      interval: 250,
    });
    // And on demand: nothing of a live owner is removed.
    expect(await runner.removeOrphans()).toEqual([]);
    expect(containersLabelled(testLabel)).toEqual([liveName, elsewhereName].sort());
  }, 90_000);
});

describeWithEngine("SandboxRunner after its host is killed (bwrap)", bwrapRequirement(), () => {
  it("the sandbox dies with its host, and a new runner removes the host's cgroup", async () => {
    const marker = `skillbox-host-death-${randomUUID()}`;
    const mayCreateCgroups = process.getuid?.() === 0;
    const host = await startHost("createBwrapProvider()", {
      ...(mayCreateCgroups ? { memoryMb: 64 } : {}),
      // Makes the sandbox's processes findable by their command line.
      workDir: `/tmp/${marker}`,
    });
    expect(host.firstLine).toBe(`ready ${SECRET_VALUE}`);
    expect(processesWith(marker).length).toBeGreaterThan(0);
    if (mayCreateCgroups) expect(cgroupFoldersOf(host.sandboxId).length).toBeGreaterThan(0);

    host.child.kill("SIGKILL");
    await host.exited;

    await vi.waitFor(() => expect(processesWith(marker)).toEqual([]), {
      timeout: GONE_WITHIN_MS,
      interval: 100,
    });
    expect(temporaryFilesOf(host.sandboxId)).toEqual([]);
    if (!mayCreateCgroups) return;
    // The emptied cgroup of the dead host is left; the next runner's sweep removes it.
    const runner = new SandboxRunner({ provider: createBwrapProvider() });
    await vi.waitFor(
      async () => {
        await runner.removeOrphans();
        expect(cgroupFoldersOf(host.sandboxId)).toEqual([]);
      },
      { timeout: GONE_WITHIN_MS, interval: 100 },
    );
  }, 60_000);
});
