import { displayPath } from "@skillbox/loader";
import { type Command, Option } from "commander";
import { scaffoldSkill } from "../scaffold/scaffold-skill.js";
import type { ScaffoldRuntime } from "../scaffold/skill-templates.js";
import { type CommandContext, resolveCommandConfig } from "./command-context.js";

interface NewOptions {
  runtime: ScaffoldRuntime;
  dir?: string;
}

/** `skillbox new <name>`: scaffolds a TypeScript skill folder. */
export function registerNewCommand(program: Command, context: CommandContext): void {
  program
    .command("new")
    .description("create a TypeScript skill folder: skill.json (schemas, examples), index.ts, README.md")
    .argument("<name>", "skill name (echo, @acme/weather)")
    .addOption(
      new Option("--runtime <runtime>", "where the handler runs")
        .choices(["inline", "worker", "container"])
        .default("inline"),
    )
    .option("--dir <folder>", "parent folder (default: the first configured folder, ./plugins)")
    .action(async (name: string, options: NewOptions, command: Command) => {
      const parent = options.dir ?? (await resolveCommandConfig(command)).dirs[0] ?? "plugins";
      const result = scaffoldSkill(parent, { name, runtime: options.runtime });
      const { terminal } = context;
      const { colors } = terminal;
      terminal.print(`${colors.green("created")} ${displayPath(result.folder)}`);
      for (const file of result.files) terminal.print(`  ${displayPath(file)}`);
      if (result.missingPackages.length > 0) {
        terminal.warn(
          "DEPENDENCY_MISSING",
          `the handler imports ${result.missingPackages.join(" and ")}, not installed here; run \`npm install ${result.missingPackages.join(" ")}\``,
        );
      }
      terminal.print(`next: ${colors.bold(`skillbox test ${name}`)}, then ${colors.bold("skillbox dev")}`);
    });
}
