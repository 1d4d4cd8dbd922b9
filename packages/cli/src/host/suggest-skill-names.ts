import { isSkillboxError, SkillboxError } from "@skillbox/core";
import { parseSkillReference } from "@skillbox/core/internal";

/** How many edits apart a name may be to be suggested: catches typos, not different words. */
const MAX_DISTANCE = 2;
const MAX_SUGGESTIONS = 3;

/** The Levenshtein distance between `a` and `b` (insertions, deletions, substitutions). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The registered names closest to `name`, best first: those at most two edits away
 * (case-insensitive), those it is a prefix of (`weath` → `weather`), and dotted names whose last
 * part it is (`issues` → `github.issues`).
 */
function closestSkillNames(name: string, candidates: Iterable<string>): string[] {
  const wanted = name.toLowerCase();
  const scored: { candidate: string; score: number }[] = [];
  for (const candidate of new Set(candidates)) {
    const lower = candidate.toLowerCase();
    if (lower === wanted) continue;
    const distance = editDistance(wanted, lower);
    const related = (wanted.length >= 2 && lower.startsWith(wanted)) || lower.split(/[./]/).at(-1) === wanted;
    if (distance <= MAX_DISTANCE || related)
      scored.push({ candidate, score: Math.min(distance, MAX_DISTANCE + 1) });
  }
  return scored
    .sort((a, b) => a.score - b.score || a.candidate.localeCompare(b.candidate))
    .slice(0, MAX_SUGGESTIONS)
    .map((entry) => entry.candidate);
}

/** `; did you mean "weather"?` for the closest names, or "" when none is close. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const names = closestSkillNames(name, candidates).map((candidate) => `"${candidate}"`);
  if (names.length === 0) return "";
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
  return `; did you mean ${list}?`;
}

/**
 * `error` with a "did you mean" added when it is a `SKILL_NOT_FOUND` for a name that has no
 * version at all (a wrong range already lists the versions there are); any other error as is.
 * `reference` is what was asked for (`name` or `name@range`).
 */
export function withSkillNameSuggestions(
  error: unknown,
  reference: string,
  candidates: () => Iterable<string>,
): unknown {
  if (!isSkillboxError(error) || error.code !== "SKILL_NOT_FOUND") return error;
  const available = (error.data as { available?: unknown[] } | undefined)?.available;
  if (available !== undefined && available.length > 0) return error;
  const suggestion = didYouMean(parseSkillReference(reference).name, candidates());
  if (suggestion === "") return error;
  return new SkillboxError(error.code, `${error.message}${suggestion}`, { cause: error, data: error.data });
}
