import { CommanderError } from "commander";
import type { CommandContext } from "./commands/command-context.js";
import { createProgram } from "./create-program.js";
import { createTerminal } from "./terminal/terminal.js";

/**
 * Runs the `skillbox` command with `argv` (the arguments after the program name) and resolves
 * with the exit code: 0 on success, 1 on any failure (printed as `error CODE: message` on
 * stderr). It never calls `process.exit`, so output is flushed and resources close first.
 */
export async function main(argv: string[]): Promise<number> {
  const context: CommandContext = { terminal: createTerminal(), exitCode: 0 };
  const program = createProgram(context);
  try {
    await program.parseAsync(argv, { from: "user" });
    return context.exitCode;
  } catch (error) {
    // Help, --version and usage errors: commander has already printed what it had to say.
    if (error instanceof CommanderError) return error.exitCode;
    context.terminal.fail(error);
    return 1;
  }
}
