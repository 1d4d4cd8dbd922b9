import { Command } from "commander";
import { CLI_VERSION } from "./cli-version.js";
import { registerCancelCommand } from "./commands/cancel-command.js";
import type { CommandContext } from "./commands/command-context.js";
import { registerDecisionCommands } from "./commands/decision-commands.js";
import { registerDoctorCommand } from "./commands/doctor-command.js";
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
import { registerVersionCommand } from "./commands/version-command.js";
import { registerWaitCommand } from "./commands/wait-command.js";
import { EXIT_CODES_HELP } from "./exit-codes.js";

/** Collects a repeatable option's values (`--dir a --dir b`). */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * The `skillbox` program. Commander never exits the process itself (`exitOverride`): `main`
 * turns its outcome into an exit code (2 for usage errors). Usage errors read `error USAGE: …`
 * like every other error.
 *
 * `--dir` is one option for every command, so the folder that `skillbox new --dir myskills`
 * wrote into is given the same way to `test`, `run`, `list`, `info`, `validate` and `dev`. It is
 * an option rather than a positional path because a skill reference (`@acme/weather`) and a
 * folder (`myskills/weather`) look alike.
 */
export function createProgram(context: CommandContext): Command {
  const program = new Command("skillbox")
    .description("Develop, serve, run, test and inspect Skillbox skills")
    // `main` answers `--version`, `-V`, `-v` and `version` before loading the program; this is
    // for the help text and for a version flag given with other options.
    .version(CLI_VERSION, "-V, --version")
    .option(
      "--dir <folder>",
      "skill folder to use instead of the config's dirs (./plugins by default); repeat for more",
      collect,
    )
    .option("--config <file>", "config file (default: skillbox.config.ts, .mts, .mjs or .js here)")
    .option(
      "--db <file|url>",
      "SQLite database, or a postgres:// URL (default: SKILLBOX_DB, the config's database, else ./.skillbox/skillbox.db)",
    )
    .option(
      "--queue <url>",
      "the queue's Redis, redis://host:port: a distributed deployment (default: SKILLBOX_QUEUE, the config's queue)",
    )
    .option(
      "--prefix <prefix>",
      "Redis key prefix of the queue (default: SKILLBOX_QUEUE_PREFIX, the config's queuePrefix, else skillbox)",
    )
    .addHelpText("after", EXIT_CODES_HELP)
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => process.stdout.write(text),
      writeErr: (text) => process.stderr.write(text),
      outputError: (text, write) => write(text.replace(/^error: /, "error USAGE: ")),
    });
  registerServeCommands(program, context);
  registerRunCommand(program, context);
  registerWaitCommand(program, context);
  registerListCommand(program, context);
  registerInfoCommand(program, context);
  registerExecutionsCommand(program, context);
  registerDecisionCommands(program, context);
  registerCancelCommand(program, context);
  registerToggleCommands(program, context);
  registerValidateCommand(program, context);
  registerNewCommand(program, context);
  registerTestCommand(program, context);
  registerMcpCommand(program, context);
  registerDoctorCommand(program, context);
  registerVersionCommand(program);
  return program;
}
