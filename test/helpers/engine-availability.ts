import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDockerProvider, SANDBOX_LABEL, SANDBOX_OWNER_LABEL } from "@skillbox/sandbox";
import { describe, it, vi } from "vitest";

/** The image built by `scripts/build-test-image.sh`: the host's node binary and dash, nothing else. */
export const TEST_IMAGE = `localhost/skillbox-node:${process.versions.node}`;

/** A tool the sandbox tests need, whether it is here, and how to get it when it is not. */
export interface EngineRequirement {
  name: string;
  available: boolean;
  /** What to install or run to make the tests run. */
  install: string;
}

function succeeds(file: string, args: string[]): boolean {
  const result = spawnSync(file, args, { stdio: "ignore", timeout: 30_000 });
  return result.status === 0;
}

const memo = new Map<string, boolean>();
function memoized(key: string, check: () => boolean): boolean {
  let answer = memo.get(key);
  if (answer === undefined) {
    answer = check();
    memo.set(key, answer);
  }
  return answer;
}

/** Whether podman is installed and its engine can run containers (storage and runtime configured). */
export function hasPodman(): boolean {
  return memoized("podman", () => succeeds("podman", ["info", "--format", "{{.Host.OCIRuntime.Name}}"]));
}

/** Whether {@link TEST_IMAGE} exists in podman's storage. */
export function hasTestImage(): boolean {
  return memoized("image", () => hasPodman() && succeeds("podman", ["image", "exists", TEST_IMAGE]));
}

/** Whether bubblewrap can create its namespaces here. */
function hasBwrap(): boolean {
  return memoized("bwrap", () => succeeds("bwrap", ["--ro-bind", "/", "/", "--unshare-all", "true"]));
}

/** Whether the docker CLI is installed (the engine behind it is started by the tests). */
function hasDockerCli(): boolean {
  return memoized("docker", () => succeeds("docker", ["--version"]));
}

const BUILD_IMAGE = "pnpm --filter @skillbox/sandbox build:image";

/** Podman plus the test image. */
export function podmanRequirement(): EngineRequirement {
  if (!hasPodman()) {
    return {
      name: "podman",
      available: false,
      install:
        'apt-get install podman runc, set runtime = "runc" in /etc/containers/containers.conf, ' +
        `then ${BUILD_IMAGE}`,
    };
  }
  return { name: `podman image ${TEST_IMAGE}`, available: hasTestImage(), install: BUILD_IMAGE };
}

/** Bubblewrap. */
export function bwrapRequirement(): EngineRequirement {
  return { name: "bubblewrap", available: hasBwrap(), install: "apt-get install bubblewrap" };
}

/** The docker CLI, plus podman and the test image to serve its API. */
export function dockerRequirement(): EngineRequirement {
  const podman = podmanRequirement();
  if (!podman.available) return podman;
  return {
    name: "the docker CLI",
    available: hasDockerCli(),
    install: "apt-get install docker.io (the CLI)",
  };
}

const warned = new Set<string>();

/**
 * `describe` when the engine is here. Otherwise the suite is skipped with one warning naming
 * what to install, except in CI (`CI` set), where a missing engine is a failing test: CI must
 * never pass by skipping the sandbox tests.
 */
export function describeWithEngine(name: string, engine: EngineRequirement, body: () => void): void {
  if (engine.available) {
    describe(name, body);
    return;
  }
  const message = `${engine.name} is not available: ${engine.install}`;
  if (process.env.CI) {
    describe(name, () => {
      it(`needs ${engine.name} (CI never skips the sandbox tests)`, () => {
        throw new Error(message);
      });
    });
    return;
  }
  if (!warned.has(engine.name)) {
    warned.add(engine.name);
    console.warn(`[skillbox sandbox tests] skipping tests that need ${message}`);
  }
  describe.skip(name, body);
}

/** Names of the Skillbox sandbox containers podman knows, running or not; `owner` narrows to one process's. */
export function listSkillboxContainers(owner?: number): string[] {
  return containersLabelled(owner === undefined ? SANDBOX_LABEL : `${SANDBOX_LABEL}=${owner}`);
}

/** Removes whatever containers this process's sandboxes left (a safety net after the assertions). */
export function removeLeftoverContainers(): void {
  const names = listSkillboxContainers(process.pid);
  if (names.length > 0) spawnSync("podman", ["rm", "--force", "--time", "0", ...names], { stdio: "ignore" });
}

/** A pid that belonged to a process of this machine and is free now: an owner that is certainly dead. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
  await once(child, "exit");
  return child.pid ?? 0;
}

/**
 * Starts a detached idle container of {@link TEST_IMAGE} whose owner label is `owner` (a
 * `formatSandboxOwner` value), plus `testLabel` for the test to find (and remove) it by; returns
 * its name.
 */
export function startLabelledContainer(owner: string, testLabel: string): string {
  const name = `skillbox-sweep-${randomUUID()}`;
  const result = spawnSync(
    "podman",
    [
      "run",
      "--detach",
      "--rm",
      "--name",
      name,
      "--label",
      testLabel,
      "--label",
      `${SANDBOX_OWNER_LABEL}=${owner}`,
      "--pull",
      "never",
      "--network",
      "none",
      TEST_IMAGE,
      "node",
      "-e",
      "setInterval(() => {}, 1000)",
    ],
    { encoding: "utf8", timeout: 60_000 },
  );
  if (result.status !== 0) throw new Error(`podman run failed: ${result.stderr}`);
  return name;
}

/** Names of the containers carrying `label` (`key` or `key=value`), running or not, sorted. */
export function containersLabelled(label: string): string[] {
  const result = spawnSync(
    "podman",
    ["ps", "--all", "--filter", `label=${label}`, "--format", "{{.Names}}"],
    {
      encoding: "utf8",
      timeout: 30_000,
    },
  );
  if (result.status !== 0) throw new Error(`podman ps failed: ${result.stderr}`);
  return result.stdout.split("\n").filter(Boolean).sort();
}

/** Removes every container carrying `label`, whoever started it (the test's own safety net). */
export function removeContainersLabelled(label: string): void {
  const names = containersLabelled(label);
  if (names.length > 0) spawnSync("podman", ["rm", "--force", "--time", "0", ...names], { stdio: "ignore" });
}

/** A running `podman system service`: podman's Docker-compatible API, for the docker CLI. */
export interface DockerApiService {
  /** `unix://…/podman.sock`, for `DOCKER_HOST`. */
  dockerHost: string;
  /** Stops the service and removes its folder. */
  stop(): Promise<void>;
}

/** Starts podman's Docker-compatible API on a socket of its own and resolves once the docker CLI gets answers. */
export async function startDockerApiService(): Promise<DockerApiService> {
  const folder = mkdtempSync(join(tmpdir(), "skillbox-docker-"));
  const dockerHost = `unix://${join(folder, "podman.sock")}`;
  const service = spawn("podman", ["system", "service", "--time=0", dockerHost], { stdio: "ignore" });
  const stop = async () => {
    if (service.exitCode === null && service.signalCode === null) {
      const exited = once(service, "exit");
      service.kill("SIGTERM");
      await exited;
    }
    rmSync(folder, { recursive: true, force: true });
  };
  const provider = createDockerProvider({ clientEnv: { DOCKER_HOST: dockerHost } });
  try {
    await vi.waitFor(
      async () => {
        if (service.exitCode !== null)
          throw new Error(`podman system service exited with ${service.exitCode}`);
        if (!(await provider.isAvailable())) throw new Error(`no Docker API answers at ${dockerHost} yet`);
      },
      { timeout: 20_000, interval: 100 },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { dockerHost, stop };
}
