import semver from "semver";
import { SkillboxError } from "../errors/skillbox-error.js";
import { isVisibleTo } from "../registry/owner-scope.js";
import { parseSkillReference } from "../registry/skill-reference.js";
import type { SkillRegistry } from "../registry/skill-registry.js";
import type { Skill } from "../types.js";

/**
 * Resolves `name@range` to the enabled skill `caller` may run, or throws `SKILL_REFERENCE_INVALID`,
 * `SKILL_NOT_FOUND` or `SKILL_DISABLED` with a message that says what exists and what to do.
 */
export function resolveSkillForCaller(registry: SkillRegistry, reference: string, caller: string): Skill {
  const { name, range } = parseSkillReference(reference);
  if (range !== undefined && range !== "latest" && semver.validRange(range) === null) {
    throw new SkillboxError(
      "SKILL_REFERENCE_INVALID",
      `"${reference}": "${range}" is not a semver version or range (try "${name}@^1.0.0" or just "${name}")`,
    );
  }
  const skill = registry.resolveVersion(name, range, caller);
  if (skill !== null) return skill;
  const disabled = registry.resolveVersion(name, range, caller, { includeDisabled: true });
  if (disabled !== null) {
    throw new SkillboxError(
      "SKILL_DISABLED",
      `${disabled.name}@${disabled.version} is disabled; enable it first`,
      {
        data: { skillId: disabled.id },
      },
    );
  }
  const versions = registry.getSkillVersions(name, caller).map((candidate) => candidate.version);
  throw new SkillboxError(
    "SKILL_NOT_FOUND",
    versions.length === 0
      ? `No skill named "${name}" is visible to owner "${caller}"`
      : `No version of "${name}" satisfies "${range}" (available: ${versions.join(", ")}; ` +
          "prereleases match only ranges that name one)",
    { data: { name, range, available: versions } },
  );
}

/**
 * `skill`, already resolved by an adapter, if `caller` may run it: visible to the caller (owned
 * by it, `public` or `system`) and enabled. Otherwise `SKILL_NOT_FOUND` or `SKILL_DISABLED`, as
 * {@link resolveSkillForCaller} answers — a skill the caller cannot see is not said to exist.
 */
export function checkSkillForCaller(skill: Skill, caller: string): Skill {
  if (!isVisibleTo(skill.apiKeyId, caller)) {
    throw new SkillboxError(
      "SKILL_NOT_FOUND",
      `No skill named "${skill.name}" is visible to owner "${caller}"`,
      {
        data: { name: skill.name, range: skill.version, available: [] },
      },
    );
  }
  if (!skill.enabled) {
    throw new SkillboxError("SKILL_DISABLED", `${skill.name}@${skill.version} is disabled; enable it first`, {
      data: { skillId: skill.id },
    });
  }
  return skill;
}
