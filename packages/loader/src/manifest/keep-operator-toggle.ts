import type { SkillRegistration, SkillRegistry } from "@skillbox/core";
import { loaderBookkeepingOf } from "./loader-bookkeeping.js";

/**
 * Keeps an operator's enable/disable (`setEnabledById`, `skillbox disable`, `PATCH
 * /api/skills/:id`) across restarts and reloads: the manifest's `enabled` is the initial value,
 * and it decides again only when the manifest itself changes it. The manifest's value is kept in the
 * loader's bookkeeping (`manifestEnabled`) to tell the two apart.
 */
export function keepOperatorToggle(
  registry: SkillRegistry,
  registration: SkillRegistration,
): SkillRegistration {
  const owner = registration.apiKeyId ?? "system";
  const stored = registry
    .getSkillVersions(registration.name, owner)
    .find((skill) => skill.apiKeyId === owner && skill.version === registration.version);
  if (stored === undefined || loaderBookkeepingOf(stored)?.manifestEnabled !== registration.enabled)
    return registration;
  return stored.enabled === registration.enabled
    ? registration
    : { ...registration, enabled: stored.enabled };
}
