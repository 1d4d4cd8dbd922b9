import { readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { SkillExecution, SkillRegistration } from "@skillbox/core";
import { createContainerRuntime, type SandboxRunner } from "@skillbox/sandbox";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import type { RunCodeOutput } from "../index.ts";

/** `skill.json` as the loader reads it. */
export interface RunCodeManifest extends Omit<SkillRegistration, "handler"> {
  name: string;
  version: string;
  handler: string;
  input: Record<string, unknown>;
  output: Record<string, unknown>;
  examples: { description?: string; input: unknown; output?: unknown }[];
}

/** The plugin's folder, which the container runtime mounts read-only in the sandbox. */
const PLUGIN_FOLDER = fileURLToPath(new URL("..", import.meta.url));

export const manifest = JSON.parse(
  readFileSync(new URL("../skill.json", import.meta.url), "utf8"),
) as RunCodeManifest;

/**
 * Registers run-code from its manifest the way the loader does: the handler is the module's
 * file URL (the container runtime loads it inside the sandbox) and the plugin folder is the
 * root that is mounted. `modulePath` swaps in another module of the folder (a test fixture).
 */
export function registerRunCode(
  host: TemporaryHost,
  modulePath = new URL("../index.ts", import.meta.url),
  overrides: Partial<SkillRegistration> = {},
): void {
  const { examples: _examples, ...registration } = manifest;
  host.registry.register({
    ...registration,
    handler: pathToFileURL(fileURLToPath(modulePath)).href,
    apiKeyId: "system",
    code: { modulePath: fileURLToPath(modulePath), codeHash: "run-code-test", root: PLUGIN_FOLDER },
    ...overrides,
  });
}

/** A temporary host whose only extra runtime is a container runtime over `runner`. */
export function createRunCodeHost(runner: SandboxRunner): TemporaryHost {
  const host = createTemporaryHost({ runtimes: [createContainerRuntime({ runner })] });
  registerRunCode(host);
  return host;
}

/** The output of a successful execution, typed. */
export function outputOf(execution: SkillExecution): RunCodeOutput {
  if (execution.status !== "success") {
    throw new Error(`expected success, got ${execution.status}: ${JSON.stringify(execution.error)}`);
  }
  return execution.output as RunCodeOutput;
}
