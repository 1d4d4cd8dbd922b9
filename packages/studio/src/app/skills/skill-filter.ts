import type { SkillView } from "../api/api-types.js";

/**
 * Whether a skill matches the filter box: every word of `text` appears (case-insensitively) in
 * its name, its description or one of its tags. An empty filter matches everything.
 */
export function matchesSkillFilter(skill: SkillView, text: string): boolean {
  const words = text
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word !== "");
  if (words.length === 0) return true;
  const haystack = [skill.name, skill.description, ...skill.tags].join("\n").toLowerCase();
  return words.every((word) => haystack.includes(word));
}
