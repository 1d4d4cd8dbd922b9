import { errorCodeOf } from "../terminal/format-error-line.js";
import type { LiveLog } from "../terminal/live-log.js";
import type { Terminal } from "../terminal/terminal.js";
import type { CliHost } from "./open-cli-host.js";

/**
 * Starts the warm pools of the container skills among `skillIds` that have one (their
 * `sandbox.warmPool`, else the config's `sandbox.warmPoolSize`), so the first calls do not pay a
 * container start. A failure (no engine, no image) is logged; the skill then starts cold.
 */
export async function warmSandboxes(
  host: CliHost,
  skillIds: string[],
  warmPoolSize: number,
  terminal: Terminal,
  log: LiveLog,
): Promise<void> {
  const containerSkills = skillIds
    .map((id) => host.registry.getSkill(id))
    .filter((skill) => skill !== undefined && skill.runtime === "container");
  if (containerSkills.length > 0) {
    // Sandboxes a host killed with SIGKILL left running (their owner pid is dead); live hosts' stay.
    const removed = await host.containerRuntime.removeOrphans().catch(() => []);
    if (removed.length > 0)
      log.line("sandbox", `removed ${removed.length} sandbox(es) left by a host that died`);
  }
  const skills = containerSkills
    .filter((skill) => skill !== undefined)
    .filter(
      (skill) =>
        skill.runtime === "container" && skill.enabled && (skill.sandbox?.warmPool ?? warmPoolSize) > 0,
    );
  if (skills.length === 0) return;
  let started = 0;
  const progress = terminal.progress(`starting sandboxes for ${skills.length} container skill(s)`);
  try {
    await Promise.all(
      skills.map(async (skill) => {
        const label = `${skill.name}@${skill.version}`;
        try {
          await host.containerRuntime.warmUp(skill);
          log.line("warmed", `${label}: ${skill.sandbox?.warmPool ?? warmPoolSize} sandbox(es) ready`);
        } catch (error) {
          log.line(
            "error",
            `${label}: no warm sandboxes (${errorCodeOf(error)}: ${(error as Error).message})`,
          );
        } finally {
          started += 1;
          progress.update(`starting sandboxes: ${started}/${skills.length} container skill(s)`);
        }
      }),
    );
  } finally {
    progress.stop();
  }
}
