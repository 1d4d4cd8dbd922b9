import type { Skill, SkillRegistry } from "@skillbox/core";
import { loaderBookkeepingOf } from "./manifest/loader-bookkeeping.js";

/** Per registry instance, `owner\0origin` of every loader that made a full load through it. */
const servedByRegistry = new WeakMap<SkillRegistry, Set<string>>();

function keyOf(owner: string, origin: string): string {
  return `${owner}\u0000${origin}`;
}

/**
 * Declares that this process serves the loader-managed skills of `owner` found through
 * `origins` (watched folders, `npm:<project>`). From the first call on, the registry hides every
 * other loader-managed skill: those a loader registered from folders this process is not
 * configured with — an earlier run's folders, a deleted plugins folder, another process's
 * folders in a shared database. Hiding is per process: the rows stay for the processes that do
 * serve them, and a loader configured with their folder again serves (or removes) them. Skills
 * registered from code carry no loader mark and are always served. Several loaders of one
 * process add up.
 */
export function serveOrigins(registry: SkillRegistry, owner: string, origins: Iterable<string>): void {
  let served = servedByRegistry.get(registry);
  if (served === undefined) {
    const keys = new Set<string>();
    served = keys;
    servedByRegistry.set(registry, keys);
    registry.addServingFilter((skill) => isServed(skill, keys));
  }
  let added = false;
  for (const origin of origins) {
    const key = keyOf(owner, origin);
    if (served.has(key)) continue;
    served.add(key);
    added = true;
  }
  if (added) registry.invalidateCache();
}

function isServed(skill: Skill, served: Set<string>): boolean {
  const bookkeeping = loaderBookkeepingOf(skill);
  if (bookkeeping === undefined) return true;
  return bookkeeping.origin !== undefined && served.has(keyOf(skill.apiKeyId, bookkeeping.origin));
}
