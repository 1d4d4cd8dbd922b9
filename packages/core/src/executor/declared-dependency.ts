import semver from "semver";
import { SkillboxError } from "../errors/skillbox-error.js";
import { parseSkillReference } from "../registry/skill-reference.js";
import type { SkillRegistry } from "../registry/skill-registry.js";
import type { Skill } from "../types.js";
import { resolveSkillForCaller } from "./resolve-skill-for-caller.js";

/**
 * The skill `ctx.call(reference)` may run for `caller`, resolved for `owner`. A skill that declares
 * `requires` may call only those skills, within the declared ranges: a bare name resolves within
 * the declared range, and an explicit range must land inside it. Skills without `requires`
 * (registered in code) may call anything their owner can see.
 */
export function declaredDependency(
  registry: SkillRegistry,
  caller: Skill,
  reference: string,
  owner: string,
): Skill {
  const requires = caller.requires;
  if (requires === undefined) return resolveSkillForCaller(registry, reference, owner);
  const { name, range } = parseSkillReference(reference);
  const declared = requires[name];
  if (declared === undefined) {
    throw new SkillboxError(
      "UNDECLARED_DEPENDENCY",
      `${caller.name}@${caller.version} called "${name}", which its \`requires\` does not declare; add "${name}": "<range>" to it`,
      { data: { caller: caller.name, callee: name } },
    );
  }
  const resolved = resolveSkillForCaller(
    registry,
    range === undefined ? `${name}@${declared}` : reference,
    owner,
  );
  if (!semver.satisfies(resolved.version, declared, { includePrerelease: true })) {
    throw new SkillboxError(
      "UNDECLARED_DEPENDENCY",
      `${caller.name}@${caller.version} called ${name}@${resolved.version}, outside its declared range "${declared}"`,
      { data: { caller: caller.name, callee: name, declared, resolved: resolved.version } },
    );
  }
  return resolved;
}
