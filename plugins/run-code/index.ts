import { defineSkill } from "@skillbox/core";
import { runCode } from "./lib/run-code.ts";
import { RUN_CODE_INPUT_SCHEMA, RUN_CODE_OUTPUT_SCHEMA, type RunCodeInput } from "./lib/run-code-schemas.ts";
import { type RunCodeSettings, resolveRunCodeSettings } from "./lib/run-code-settings.ts";

export type { RunCodeInput, RunCodeLanguage, RunCodeOutput } from "./lib/run-code-schemas.ts";
export type { RunCodeSettings } from "./lib/run-code-settings.ts";

/**
 * The `run-code` skill: runs JavaScript (or Python, where the image has python3) and returns its
 * stdout, stderr and exit code. Its manifest says `runtime: "container"`, so this module is
 * loaded inside the sandbox and the code runs there, within the sandbox's memory, CPU, pids and
 * network limits; outside a sandbox the handler refuses (`SANDBOX_UNAVAILABLE`). A program that
 * exits non-zero is a successful execution: the caller reads `exitCode`.
 *
 * The module imports only `@skillbox/core` and Node's built-ins, which are all that resolve
 * inside the sandbox.
 */
export function createRunCodeSkill(settings: RunCodeSettings = {}) {
  const resolved = resolveRunCodeSettings(settings);
  return defineSkill({
    input: RUN_CODE_INPUT_SCHEMA,
    output: RUN_CODE_OUTPUT_SCHEMA,
    handler: (input: RunCodeInput, context) => runCode(input, context, resolved),
  });
}

export default createRunCodeSkill();
