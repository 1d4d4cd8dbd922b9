import type { SandboxProvider } from "../sandbox-types.js";
import { createContainerCliProvider } from "./container-cli-provider.js";

/**
 * WSL containers on Windows (`wslc.exe`, WSL 2.9.3+), whose CLI follows Docker's `run` flags.
 * Each container runs in WSL's Linux VM, so the hardening flags are those of a Linux engine.
 */
export function createWslcProvider(options: { binary?: string } = {}): SandboxProvider {
  return createContainerCliProvider({
    name: "wslc",
    binary: options.binary ?? "wslc",
    probeArgs: ["container", "ps", "--quiet"],
    // A Windows CLI has no `/dev/fd` to read a streamed env file from.
    environmentVia: "file",
  });
}
