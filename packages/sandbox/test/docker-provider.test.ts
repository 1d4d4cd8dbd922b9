import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDockerProvider, SandboxRunner } from "@skillbox/sandbox";
import {
  type DockerApiService,
  describeWithEngine,
  dockerRequirement,
  listSkillboxContainers,
  removeLeftoverContainers,
  startDockerApiService,
  TEST_IMAGE,
} from "@skillbox/test-helpers/engine-availability";
import { afterAll, beforeAll, expect, it } from "vitest";
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
  let service: DockerApiService | undefined;
  let runner: SandboxRunner;

  beforeAll(async () => {
    // Podman's Docker-compatible API: the docker CLI talks to it as to a Docker daemon.
    service = await startDockerApiService();
    runner = new SandboxRunner({
      provider: createDockerProvider({ clientEnv: { DOCKER_HOST: service.dockerHost } }),
    });
  }, 30_000);

  afterAll(async () => {
    await runner?.killAll();
    removeLeftoverContainers();
    await service?.stop();
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
      clientEnv: { DOCKER_HOST: `unix://${join(tmpdir(), `skillbox-missing-${process.pid}.sock`)}` },
    });
    expect(await provider.isAvailable()).toBe(false);
  });
});
