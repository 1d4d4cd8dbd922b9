import type { SandboxProvider } from "../sandbox-types.js";
import { createContainerCliProvider } from "./container-cli-provider.js";

/** Options of the podman and docker providers. */
export interface EngineProviderOptions {
  /** The CLI binary (default `podman` / `docker`). */
  binary?: string;
  /** Extra flags for `run`, such as `["--runtime", "runc"]`. */
  runArgs?: string[];
  /** Extra environment of the CLI (for example `CONTAINER_HOST` or `DOCKER_HOST`). */
  clientEnv?: Record<string, string>;
}

/** Podman (rootful or rootless), the default provider on Linux. */
export function createPodmanProvider(options: EngineProviderOptions = {}): SandboxProvider {
  return createContainerCliProvider({
    name: "podman",
    binary: options.binary ?? "podman",
    runArgs: options.runArgs,
    clientEnv: options.clientEnv,
    // `podman version` answers without an engine for a local podman; `info` proves storage works.
    probeArgs: ["info", "--format", "{{.Host.OCIRuntime.Name}}"],
    // Podman's `rm --force` waits for the stop timeout (10 s) unless told otherwise.
    removeArgs: ["rm", "--force", "--time", "0"],
  });
}
