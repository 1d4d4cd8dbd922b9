import type { Command } from "commander";
import { CLI_VERSION } from "../cli-version.js";

/** `skillbox version`: prints the version, like `--version` and `-V`. */
export function registerVersionCommand(program: Command): void {
  program
    .command("version")
    .description("print the version of skillbox")
    .action(() => {
      process.stdout.write(`${CLI_VERSION}\n`);
    });
}
