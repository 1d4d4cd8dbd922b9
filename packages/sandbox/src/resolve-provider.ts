import { SkillboxError } from "@skillbox/core";
import { createAppleContainerProvider } from "./providers/apple-container-provider.js";
import { createBwrapProvider } from "./providers/bwrap-provider.js";
import { createDockerProvider } from "./providers/docker-provider.js";
import { createOrbstackProvider } from "./providers/orbstack-provider.js";
import { createPodmanProvider } from "./providers/podman-provider.js";
import { createWslcProvider } from "./providers/wslc-provider.js";
import type { SandboxProvider, SandboxProviderName } from "./sandbox-types.js";

/** The environment variable that picks a provider explicitly. */
export const SANDBOX_RUNTIME_VARIABLE = "SKILLBOX_SANDBOX_RUNTIME";

const FACTORIES: Record<SandboxProviderName, () => SandboxProvider> = {
  podman: () => createPodmanProvider(),
  docker: () => createDockerProvider(),
  bwrap: () => createBwrapProvider(),
  "apple-container": () => createAppleContainerProvider(),
  wslc: () => createWslcProvider(),
  orbstack: () => createOrbstackProvider(),
};

/**
 * Which providers are tried, best first, on each platform. Engines with images come before
 * bwrap, which can only run what the host has installed.
 */
export const PROVIDER_PRIORITY: Partial<Record<NodeJS.Platform, SandboxProviderName[]>> = {
  linux: ["podman", "docker", "bwrap"],
  darwin: ["apple-container", "orbstack", "docker", "podman"],
  win32: ["wslc", "docker", "podman"],
};

/** Options of {@link resolveProvider}. */
export interface ResolveProviderOptions {
  /** Where `SKILLBOX_SANDBOX_RUNTIME` is read (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  /** Skip the cache of earlier answers (it is keyed by platform and the variable). */
  fresh?: boolean;
}

/** Whether `name` is a provider Skillbox knows. */
export function isSandboxProviderName(name: string): name is SandboxProviderName {
  return Object.hasOwn(FACTORIES, name);
}

/** A provider by name with its default settings. */
export function createSandboxProvider(name: SandboxProviderName): SandboxProvider {
  return FACTORIES[name]();
}

const cache = new Map<string, Promise<SandboxProvider>>();

async function probe(platform: NodeJS.Platform): Promise<SandboxProvider> {
  const candidates = PROVIDER_PRIORITY[platform] ?? ["docker", "podman"];
  for (const name of candidates) {
    const provider = createSandboxProvider(name);
    if (await provider.isAvailable().catch(() => false)) return provider;
  }
  throw new SkillboxError(
    "SANDBOX_UNAVAILABLE",
    `no sandbox provider is installed (tried ${candidates.join(", ")}); install one, for example ` +
      `\`apt-get install podman runc\` or \`apt-get install bubblewrap\` on Debian`,
  );
}

/**
 * The provider to run sandboxes with: `SKILLBOX_SANDBOX_RUNTIME` when set (it wins without a
 * probe), otherwise the first installed provider in {@link PROVIDER_PRIORITY} order. The
 * answer is cached; a failed probe is not.
 */
export function resolveProvider(options: ResolveProviderOptions = {}): Promise<SandboxProvider> {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const explicit = env[SANDBOX_RUNTIME_VARIABLE]?.trim();
  if (explicit) {
    if (!isSandboxProviderName(explicit)) {
      return Promise.reject(
        new SkillboxError(
          "SANDBOX_CONFIG_INVALID",
          `${SANDBOX_RUNTIME_VARIABLE}=${JSON.stringify(explicit)} is not a sandbox provider; use one of ` +
            Object.keys(FACTORIES).join(", "),
        ),
      );
    }
    return Promise.resolve(createSandboxProvider(explicit));
  }
  const key = platform;
  let answer = options.fresh ? undefined : cache.get(key);
  if (answer === undefined) {
    answer = probe(platform);
    cache.set(key, answer);
    answer.catch(() => cache.delete(key));
  }
  return answer;
}
