import { CLI_VERSION } from "./cli-version.js";
import type { CommandContext } from "./commands/command-context.js";
import { EXIT_CODES } from "./exit-codes.js";

/** The arguments that only ask for the version (`skillbox --version`, `-V`, `-v`, `version`). */
const VERSION_REQUESTS = new Set(["--version", "-V", "-v", "version"]);

/**
 * Runs the `skillbox` command with `argv` (the arguments after the program name) and resolves
 * with the exit code (see {@link EXIT_CODES}): 0 on success, 1 when the command ran and failed
 * (an execution, an example, a check), 2 for a usage error (unknown command or option, missing
 * argument, bad option value, --input that is not JSON). Errors print as `error CODE: message`
 * on stderr. It never calls `process.exit`, so output is flushed and resources close first.
 */
export async function main(argv: string[]): Promise<number> {
  // Answered before anything else is imported: the program, its commands and what they import
  // (core, better-sqlite3, the loader, the server) take most of a second to load.
  if (argv.length === 1 && VERSION_REQUESTS.has(argv[0]!)) {
    process.stdout.write(`${CLI_VERSION}\n`);
    return EXIT_CODES.success;
  }
  const [{ createProgram }, { createTerminal }, { exitCodeOf }] = await Promise.all([
    import("./create-program.js"),
    import("./terminal/terminal.js"),
    import("./usage-error.js"),
  ]);
  const context: CommandContext = { terminal: createTerminal(), exitCode: EXIT_CODES.success };
  const program = createProgram(context);
  try {
    await program.parseAsync(argv, { from: "user" });
    return context.exitCode;
  } catch (error) {
    const code = exitCodeOf(error);
    // Help, --version and commander's usage errors: commander has already printed what it had to say.
    if (!isCommanderError(error)) context.terminal.fail(error);
    return code;
  }
}

function isCommanderError(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === "CommanderError";
}
