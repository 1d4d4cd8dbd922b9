import { Command } from "commander";
import { CLI_VERSION } from "./cli-version.js";
import type { CommandContext } from "./commands/command-context.js";
import { registerExecutionsCommand } from "./commands/executions-command.js";
import { registerInfoCommand } from "./commands/info-command.js";
import { registerListCommand } from "./commands/list-command.js";
import { registerMcpCommand } from "./commands/mcp-command.js";
import { registerNewCommand } from "./commands/new-command.js";
import { registerRunCommand } from "./commands/run-command.js";
import { registerServeCommands } from "./commands/serve-commands.js";
import { registerTestCommand } from "./commands/test-command.js";
import { registerToggleCommands } from "./commands/toggle-commands.js";
import { registerValidateCommand } from "./commands/validate-command.js";

/**
 * The `skillbox` program. Commander never exits the process itself (`exitOverride`): `main`
 * turns its outcome into an exit code. Usage errors read `error USAGE: …` like every other error.
 */
export function createProgram(context: CommandContext): Command {
  const program = new Command("skillbox")
    .description("Develop, serve, run, test and inspect Skillbox skills")
    .version(CLI_VERSION, "-v, --version")
    .option("--config <file>", "config file (default: skillbox.config.ts, .mts, .mjs or .js here)")
    .option(
      "--db <file>",
      "SQLite database (default: SKILLBOX_DB, the config's database, else ./.skillbox/skillbox.db)",
    )
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => process.stdout.write(text),
      writeErr: (text) => process.stderr.write(text),
      outputError: (text, write) => write(text.replace(/^error: /, "error USAGE: ")),
    });
  registerServeCommands(program, context);
  registerRunCommand(program, context);
  registerListCommand(program, context);
  registerInfoCommand(program, context);
  registerExecutionsCommand(program, context);
  registerToggleCommands(program, context);
  registerValidateCommand(program, context);
  registerNewCommand(program, context);
  registerTestCommand(program, context);
  registerMcpCommand(program, context);
  return program;
}
