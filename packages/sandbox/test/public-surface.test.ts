import { fileURLToPath } from "node:url";
import { describePublicSurface } from "@skillbox/test-helpers/public-surface";

/**
 * Every runtime export of `@skillbox/sandbox`, sorted. Adding one is a deliberate edit of this list:
 * what users import is documented in a README; what only Skillbox's own packages need goes to
 * `@skillbox/sandbox/internal` instead.
 */
const PUBLIC_EXPORTS = [
  "DEFAULT_SANDBOX_IMAGE",
  "PROVIDER_PRIORITY",
  "SANDBOX_LABEL",
  "SANDBOX_OWNER_LABEL",
  "SANDBOX_RUNTIME_VARIABLE",
  "SandboxRunner",
  "StartedSandbox",
  "createAppleContainerProvider",
  "createBwrapProvider",
  "createContainerCliProvider",
  "createContainerRuntime",
  "createDockerProvider",
  "createOrbstackProvider",
  "createPodmanProvider",
  "createSandboxProvider",
  "createWslcProvider",
  "isSandboxProviderName",
  "resolveProvider",
  "resolveSandboxConfig",
  "sandboxRunner",
];

describePublicSurface({
  packageName: "@skillbox/sandbox",
  packageRoot: fileURLToPath(new URL("..", import.meta.url)),
  exports: PUBLIC_EXPORTS,
  importSource: () => import("@skillbox/sandbox"),
  importInternal: () => import("@skillbox/sandbox/internal"),
});
