import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SkillContext } from "@skillbox/core";
import { assertInsideSandbox } from "./assert-inside-sandbox.ts";
import { findInterpreter } from "./find-interpreter.ts";
import type { RunCodeInput, RunCodeOutput } from "./run-code-schemas.ts";
import type { ResolvedRunCodeSettings } from "./run-code-settings.ts";
import { runProgram } from "./run-program.ts";

/**
 * The program's environment: a PATH and a home in its own folder, nothing of the handler's
 * (such as `SKILLBOX_SKILL` or a `NODE_OPTIONS` the image may set).
 */
function programEnvironment(home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    TMPDIR: tmpdir(),
    LANG: "C.UTF-8",
  };
}

/**
 * Runs `input.code` inside the sandbox this handler runs in: writes it to a fresh folder in the
 * sandbox's /tmp, starts the language's interpreter there with the stdin, arguments and
 * timeout, and returns what it printed and how it ended.
 */
export async function runCode(
  input: RunCodeInput,
  context: SkillContext,
  settings: ResolvedRunCodeSettings,
): Promise<RunCodeOutput> {
  assertInsideSandbox(context);
  const interpreter = findInterpreter(input.language);
  const folder = await mkdtemp(join(tmpdir(), "run-code-"));
  try {
    const script = join(folder, interpreter.scriptName);
    await writeFile(script, input.code, { mode: 0o600 });
    context.logger.debug("running code", { language: input.language, bytes: Buffer.byteLength(input.code) });
    return await runProgram({
      file: interpreter.file,
      args: [...interpreter.args, script, ...(input.args ?? [])],
      cwd: folder,
      env: programEnvironment(folder),
      stdin: input.stdin ?? "",
      timeoutMs: input.timeoutMs ?? settings.defaultTimeoutMs,
      maxOutputBytes: settings.maxOutputBytes,
      signal: context.signal,
    });
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
