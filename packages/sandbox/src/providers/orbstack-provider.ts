import type { SandboxProvider } from "../sandbox-types.js";
import { createContainerCliProvider } from "./container-cli-provider.js";

/** OrbStack on macOS: its Docker engine, reached through the docker CLI's `orbstack` context. */
export function createOrbstackProvider(options: { binary?: string } = {}): SandboxProvider {
  return createContainerCliProvider({
    name: "orbstack",
    binary: options.binary ?? "docker",
    globalArgs: ["--context", "orbstack"],
    probeArgs: ["version", "--format", "{{.Server.Version}}"],
  });
}
