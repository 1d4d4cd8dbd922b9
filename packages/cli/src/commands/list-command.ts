import type { Command } from "commander";
import { formatTable, truncate } from "../terminal/format-table.js";
import { sourceLabel } from "../terminal/source-label.js";
import { type CommandContext, resolveCommandConfig, withLoadedSkills } from "./command-context.js";

interface ListOptions {
  json?: boolean;
}

/** `skillbox list [dirs…]`: every skill version in the registry, after loading the folders. */
export function registerListCommand(program: Command, context: CommandContext): void {
  program
    .command("list")
    .description("list the skills in the registry (the folders are loaded first)")
    .argument("[dirs...]", "skill folders to load (like --dir; default: the config's dirs, else ./plugins)")
    .option("--json", "print the skills as JSON")
    .action(async (dirs: string[], options: ListOptions, command: Command) => {
      const config = await resolveCommandConfig(command, dirs);
      const skills = await withLoadedSkills(context, config, async (host) =>
        host.registry.list(config.owner),
      );
      const { terminal } = context;
      if (options.json) {
        terminal.printJson(skills);
        return;
      }
      if (skills.length === 0) {
        terminal.print(`no skills; create one with ${terminal.colors.bold("skillbox new <name>")}`);
        return;
      }
      const { colors } = terminal;
      const rows = skills.map((skill) => [
        colors.bold(skill.name),
        skill.version,
        skill.runtime,
        skill.enabled ? colors.green("enabled") : colors.yellow("disabled"),
        skill.apiKeyId,
        sourceLabel(skill),
        truncate(skill.description, 60),
      ]);
      const headers = ["NAME", "VERSION", "RUNTIME", "STATE", "OWNER", "SOURCE", "DESCRIPTION"];
      for (const line of formatTable(headers, rows, colors)) terminal.print(line);
    });
}
