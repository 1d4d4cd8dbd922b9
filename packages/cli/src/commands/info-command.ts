import { type Skill, SkillboxError } from "@skillbox/core";
import { parseSkillReference } from "@skillbox/core/internal";
import type { Command } from "commander";
import { didYouMean } from "../host/suggest-skill-names.js";
import { sourceLabel } from "../terminal/source-label.js";
import type { Terminal } from "../terminal/terminal.js";
import { type CommandContext, resolveCommandConfig, withLoadedSkills } from "./command-context.js";

interface InfoOptions {
  json?: boolean;
}

/** `skillbox info <name[@range]>`: every version of a skill with its schemas, runtime and source. */
export function registerInfoCommand(program: Command, context: CommandContext): void {
  program
    .command("info")
    .description("show a skill's versions, schemas, runtime and source")
    .argument(
      "<name>",
      "skill name, optionally with a version range (echo@^1); --dir <folder> to load another folder",
    )
    .option("--json", "print the versions as JSON")
    .action(async (reference: string, options: InfoOptions, command: Command) => {
      const config = await resolveCommandConfig(command);
      const { name, range } = parseSkillReference(reference);
      const { versions, names } = await withLoadedSkills(context, config, async (host) => ({
        versions: host.registry
          .getSkillVersions(name, config.owner)
          .filter((skill) => range === undefined || host.registry.satisfies(skill.version, range))
          .sort((a, b) => host.registry.compareVersions(b.version, a.version)),
        names: host.registry.list(config.owner).map((skill) => skill.name),
      }));
      if (versions.length === 0) {
        throw new SkillboxError(
          "SKILL_NOT_FOUND",
          range === undefined
            ? `no skill named "${name}"${didYouMean(name, names) || "; `skillbox list` shows the skills there are"}`
            : `no version of "${name}" satisfies "${range}"; \`skillbox info ${name}\` shows its versions`,
        );
      }
      if (options.json) context.terminal.printJson(versions);
      else printVersions(context.terminal, versions);
    });
}

function printVersions(terminal: Terminal, versions: Skill[]): void {
  const { colors } = terminal;
  const field = (label: string, value: string) => terminal.print(`  ${colors.dim(label.padEnd(12))}${value}`);
  const schema = (label: string, value: unknown) => {
    terminal.print(`  ${colors.dim(label)}`);
    for (const line of JSON.stringify(value, null, 2).split("\n")) terminal.print(`    ${line}`);
  };
  versions.forEach((skill, index) => {
    if (index > 0) terminal.print("");
    const state = skill.enabled ? colors.green("enabled") : colors.yellow("disabled");
    terminal.print(`${colors.bold(`${skill.name}@${skill.version}`)}  ${state}`);
    if (skill.description !== "") field("description", skill.description);
    field("runtime", skill.runtime);
    field("owner", skill.apiKeyId);
    field("source", sourceLabel(skill));
    if (skill.timeoutMs !== undefined) field("timeout", `${skill.timeoutMs} ms`);
    if (skill.tags.length > 0) field("tags", skill.tags.join(", "));
    if (skill.requires !== undefined) {
      field(
        "requires",
        Object.entries(skill.requires)
          .map(([dependency, dependencyRange]) => `${dependency}@${dependencyRange}`)
          .join(", "),
      );
    }
    if (skill.sandbox !== undefined) field("sandbox", JSON.stringify(skill.sandbox));
    if (skill.examples !== undefined)
      field("examples", `${skill.examples.length} (run them with skillbox test ${skill.name})`);
    schema("input", skill.schema.input);
    if (skill.schema.output !== undefined) schema("output", skill.schema.output);
  });
}
