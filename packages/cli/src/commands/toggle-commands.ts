import { isPostgresUrl, SkillboxError } from "@skillbox/core";
import type { Command } from "commander";
import { type CommandContext, resolveCommandConfig, withLoadedSkills } from "./command-context.js";

/**
 * `skillbox enable|disable <name@version>`: flips a version's flag in the registry. It sticks
 * across loads and edits until the manifest's own `enabled` changes (the loader keeps an
 * operator's toggle), and a running server on the same database sees it on its next lookup.
 */
export function registerToggleCommands(program: Command, context: CommandContext): void {
  for (const enabled of [true, false]) {
    const verb = enabled ? "enable" : "disable";
    program
      .command(verb)
      .description(`${verb} a skill version (name@version; a bare name means its highest version)`)
      .argument("<skill>", "name@version")
      .action(async (reference: string, _options: unknown, command: Command) => {
        const config = await resolveCommandConfig(command);
        if (isPostgresUrl(config.database) || config.queue !== undefined) {
          // A distributed host's registry lives in its memory, loaded from its folders: a toggle
          // there would be lost when the command exits, and other hosts would never see it.
          throw new SkillboxError(
            "CONFIG_INVALID",
            `\`skillbox ${verb}\` toggles a skill in a SQLite registry; on a distributed deployment every host loads its skills from its folders, so set \`"enabled": ${enabled}\` in the skill's manifest and deploy it`,
          );
        }
        const skill = await withLoadedSkills(context, config, async (host) => {
          const found = host.registry.getSkill(reference, config.owner);
          if (found === undefined) {
            throw new SkillboxError(
              "SKILL_NOT_FOUND",
              `no skill matches "${reference}"; \`skillbox list\` shows the skills there are`,
            );
          }
          return found.enabled === enabled
            ? found
            : (host.registry.setEnabledById(found.id, enabled) ?? found);
        });
        context.terminal.print(`${enabled ? "enabled" : "disabled"} ${skill.name}@${skill.version}`);
      });
  }
}
