import type { SkillStatsResult } from "../executor/execution-stats.js";
import type { Skill } from "../types.js";

/**
 * The shared record's statistics named by this host's registry. The record tells skill versions
 * apart by name and version (every host's registry gives a version an id of its own), so each
 * entry takes the id of the skill of `skills` (what the caller sees here) with that name and
 * version — one entry per such skill; an entry with none keeps the id it was recorded under.
 * Ordered by name, then id, as the query orders them.
 */
export function withLocalSkillIds(result: SkillStatsResult, skills: readonly Skill[]): SkillStatsResult {
  const ids = new Map<string, string[]>();
  for (const skill of skills) {
    const key = versionKey(skill.name, skill.version);
    ids.set(key, [...(ids.get(key) ?? []), skill.id]);
  }
  const named = result.skills.flatMap((entry) => {
    const local = ids.get(versionKey(entry.skillName, entry.skillVersion));
    return local === undefined ? [entry] : local.map((skillId) => ({ ...entry, skillId }));
  });
  named.sort((a, b) => compare(a.skillName, b.skillName) || compare(a.skillId, b.skillId));
  return { ...result, skills: named };
}

/** As `STATS_VERSION_KEYS.nameAndVersion` builds it (`@` never occurs in a version). */
function versionKey(name: string, version: string): string {
  return `${name}@${version}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
