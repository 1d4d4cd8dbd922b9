export {
  type ContainerRuntime,
  type ContainerRuntimeOptions,
  createContainerRuntime,
  DEFAULT_SANDBOX_IMAGE,
} from "./container-runtime.js";
export { sandboxRunner } from "./default-sandbox-runner.js";
export { OutputCapture } from "./output-capture.js";
export { appleContainerRunArgs, createAppleContainerProvider } from "./providers/apple-container-provider.js";
export { type BwrapProviderOptions, bwrapArgs, createBwrapProvider } from "./providers/bwrap-provider.js";
export {
  type ContainerCliProviderOptions,
  createContainerCliProvider,
  dockerCompatibleRunArgs,
  SANDBOX_LABEL,
  sandboxOwnerLabelArgs,
} from "./providers/container-cli-provider.js";
export { createDockerProvider } from "./providers/docker-provider.js";
export { createOrbstackProvider } from "./providers/orbstack-provider.js";
export { createPodmanProvider, type EngineProviderOptions } from "./providers/podman-provider.js";
export { createWslcProvider } from "./providers/wslc-provider.js";
export {
  createSandboxProvider,
  isSandboxProviderName,
  PROVIDER_PRIORITY,
  type ResolveProviderOptions,
  resolveProvider,
  SANDBOX_RUNTIME_VARIABLE,
} from "./resolve-provider.js";
export { resolveSandboxConfig } from "./resolve-sandbox-config.js";
export {
  currentSandboxOwner,
  formatSandboxOwner,
  isSandboxOwnerDead,
  parseSandboxOwner,
  SANDBOX_OWNER_LABEL,
  type SandboxOwner,
} from "./sandbox-owner.js";
export { SandboxRunner, type SandboxRunnerOptions } from "./sandbox-runner.js";
export type {
  ResolvedSandboxConfig,
  SandboxConfig,
  SandboxMount,
  SandboxProvider,
  SandboxProviderName,
  SandboxResult,
  SandboxSpec,
  SpawnPlan,
} from "./sandbox-types.js";
export { StartedSandbox } from "./started-sandbox.js";
export { WarmPool } from "./warm-pool.js";
