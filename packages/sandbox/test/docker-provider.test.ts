import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDockerProvider, SandboxRunner } from "@skillbox/sandbox";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import {
  describeWithEngine,
  dockerRequirement,
  listSkillboxContainers,
  removeLeftoverContainers,
  TEST_IMAGE,
} from "./engine-availability.js";
import { NETWORK_PROBE, nodeCommand } from "./isolation-probes.js";

/**
 * Podman before 4.6 answers the Docker API's `wait?condition=removed` (what `docker run --rm`
 * asks) with exit code 0 whatever the process returned (containers/podman#18912), so exit codes
 * and OOM kills cannot be seen through its socket.
 */
function podmanLosesRemovedExitCodes(): boolean {
  const version = spawnSync("podman", ["version", "--format", "{{.Version}}"], { encoding: "utf8" });
  const [major = 0, minor = 0] = (version.stdout ?? "").trim().split(".").map(Number);
  return major < 4 || (major === 4 && minor < 6);
}

describeWithEngine("createDockerProvider", dockerRequirement(), () => {
  let folder: string;
  let dockerHost: string;
  let service: ChildProcess | undefined;
  let runner: SandboxRunner;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "skillbox-docker-"));
    dockerHost = `unix://${join(folder, "podman.sock")}`;
    // Podman's Docker-compatible API: the docker CLI talks to it as to a Docker daemon.
    const started = spawn("podman", ["system", "service", "--time=0", dockerHost], { stdio: "ignore" });
    service = started;
    const provider = createDockerProvider({ clientEnv: { DOCKER_HOST: dockerHost } });
    await vi.waitFor(
      async () => {
        if (started.exitCode !== null)
          throw new Error(`podman system service exited with ${started.exitCode}`);
        if (!(await provider.isAvailable())) throw new Error(`no Docker API answers at ${dockerHost} yet`);
      },
      { timeout: 20_000, interval: 100 },
    );
    runner = new SandboxRunner({ provider });
  }, 30_000);

  afterAll(async () => {
    await runner?.killAll();
    removeLeftoverContainers();
    if (service !== undefined && service.exitCode === null && service.signalCode === null) {
      const exited = once(service, "exit");
      service.kill("SIGTERM");
      await exited;
    }
    rmSync(folder, { recursive: true, force: true });
  });

  it("runs the image with the given env through the docker CLI", async () => {
    const result = await runner.run(
      TEST_IMAGE,
      nodeCommand("console.log(JSON.parse(process.env.INPUT_DATA).foo, process.getuid(), process.cwd())"),
      { INPUT_DATA: JSON.stringify({ foo: "bar" }) },
      { timeout: 15_000 },
    );
    expect(result).toMatchObject({
      provider: "docker",
      exitCode: 0,
      stdout: "bar 65534 /workspace\n",
      stderr: "",
      killed: false,
      oomKilled: false,
    });
    expect(listSkillboxContainers()).not.toContain(result.id);
  });

  it.skipIf(podmanLosesRemovedExitCodes())("reports the process's exit code", async () => {
    const result = await runner.run(TEST_IMAGE, nodeCommand("process.exit(3)"));
    expect(result.exitCode).toBe(3);
  });

  it("blocks the network (ENETUNREACH)", async () => {
    const result = await runner.run(TEST_IMAGE, nodeCommand(NETWORK_PROBE));
    expect(result.stdout.trim()).toBe("ENETUNREACH");
  });

  it("kills a run at its timeout and leaves no container", async () => {
    const result = await runner.run(
      TEST_IMAGE,
      nodeCommand("setInterval(() => {}, 1000)"),
      {},
      { timeout: 1_000 },
    );
    expect(result).toMatchObject({ killed: true, oomKilled: false });
    expect(result.duration).toBeGreaterThanOrEqual(1_000);
    expect(listSkillboxContainers()).not.toContain(result.id);
    expect(runner.isRunning(result.id)).toBe(false);
  });

  it("is not available when DOCKER_HOST points at a socket that does not exist", async () => {
    const provider = createDockerProvider({
      clientEnv: { DOCKER_HOST: `unix://${join(folder, "missing.sock")}` },
    });
    expect(await provider.isAvailable()).toBe(false);
  });
});
