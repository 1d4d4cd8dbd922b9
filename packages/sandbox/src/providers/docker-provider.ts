import type { SandboxProvider } from "../sandbox-types.js";
import { createContainerCliProvider } from "./container-cli-provider.js";
import type { EngineProviderOptions } from "./podman-provider.js";

/**
 * The Docker CLI against whatever engine `DOCKER_HOST` (or the current context) points at:
 * Docker Engine, Docker Desktop, or Podman's Docker-compatible socket.
 */
export function createDockerProvider(options: EngineProviderOptions = {}): SandboxProvider {
  return createContainerCliProvider({
    name: "docker",
    binary: options.binary ?? "docker",
    runArgs: options.runArgs,
    clientEnv: options.clientEnv,
    // Fails when only the client is installed and no engine answers.
    probeArgs: ["version", "--format", "{{.Server.Version}}"],
  });
}
