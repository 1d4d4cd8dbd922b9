import { resolveSandboxConfig, StartedSandbox } from "@skillbox/sandbox";

/** The config of a {@link plainSandbox}: no time limit. */
export const PLAIN_SANDBOX_CONFIG = resolveSandboxConfig({ timeout: 0 });

/**
 * A plain `node -e script` process in a sandbox's place, for tests of what the host reads from a
 * sandbox's streams (no isolation needed for that, so no engine either).
 */
export function plainSandbox(id: string, script: string): StartedSandbox {
  const provider = {
    name: "bwrap" as const,
    usesImages: false,
    isAvailable: async () => true,
    plan: () => ({ file: process.execPath, args: ["-e", script], env: { PATH: process.env.PATH ?? "" } }),
  };
  return new StartedSandbox(provider, { id, image: "", command: [], env: {}, config: PLAIN_SANDBOX_CONFIG });
}
