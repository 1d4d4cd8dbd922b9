import { resolve } from "node:path";
import { displayPath } from "@skillbox/loader/internal";
import { type Command, Option } from "commander";
import { scaffoldSkill } from "../scaffold/scaffold-skill.js";
import type { ScaffoldRuntime } from "../scaffold/skill-templates.js";
import { type CommandContext, type GlobalOptions, resolveCommandConfig } from "./command-context.js";

interface NewOptions extends GlobalOptions {
  runtime: ScaffoldRuntime;
}

/** `arg` quoted for a POSIX shell when it needs to be, so a printed command can be pasted. */
function shellWord(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

/**
 * `skillbox new <name> [--dir <folder>]`: scaffolds a TypeScript skill folder and prints the
 * commands to try it. With `--dir` those commands carry the same `--dir`, so they find the skill
 * when pasted from the same folder.
 */
export function registerNewCommand(program: Command, context: CommandContext): void {
  program
    .command("new")
    .description(
      "create a TypeScript skill folder (skill.json with schemas and examples, index.ts, package.json, tsconfig.json, README.md) in --dir <folder> (default: the first configured folder, ./plugins)",
    )
    .argument("<name>", "skill name (echo, @acme/weather)")
    .addOption(
      new Option("--runtime <runtime>", "where the handler runs")
        .choices(["inline", "worker", "container"])
        .default("inline"),
    )
    .action(async (name: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<NewOptions>();
      const given = options.dir?.[0];
      const parent = given ?? (await resolveCommandConfig(command)).dirs[0] ?? "plugins";
      // What the next commands need to find the skill: nothing when it went where they look anyway.
      const dirFlag = given === undefined ? "" : `--dir ${shellWord(displayPath(resolve(given)))}`;
      const result = scaffoldSkill({
        parent,
        projectRoot: process.cwd(),
        name,
        runtime: options.runtime,
        commandSuffix: dirFlag,
      });
      const { terminal } = context;
      const { colors } = terminal;
      terminal.print(`${colors.green("created")} ${displayPath(result.folder)}`);
      for (const file of result.files) terminal.print(`  ${displayPath(file)}`);
      if (result.gitignore !== undefined) {
        terminal.print(`${colors.green("updated")} ${displayPath(result.gitignore)} (ignores .skillbox/)`);
      }
      const suffix = dirFlag === "" ? "" : ` ${dirFlag}`;
      terminal.print(
        `next: ${colors.bold(`skillbox test ${shellWord(name)}${suffix}`)}, then ${colors.bold(`skillbox dev${suffix}`)}`,
      );
    });
}
