/**
 * `@skillbox/sandbox`: the public API (named exports only; packages/sandbox/test/public-surface.test.ts
 * lists them). What only Skillbox's own packages and tests share is in `@skillbox/sandbox/internal`,
 * which is not semver-stable.
 */
export {
  type ContainerRuntime,
  type ContainerRuntimeOptions,
  createContainerRuntime,
  DEFAULT_SANDBOX_IMAGE,
} from "./container-runtime.js";
export { sandboxRunner } from "./default-sandbox-runner.js";
export { createAppleContainerProvider } from "./providers/apple-container-provider.js";
export { type BwrapProviderOptions, createBwrapProvider } from "./providers/bwrap-provider.js";
export {
  type ContainerCliProviderOptions,
  createContainerCliProvider,
  SANDBOX_LABEL,
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
export { SANDBOX_OWNER_LABEL } from "./sandbox-owner.js";
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
