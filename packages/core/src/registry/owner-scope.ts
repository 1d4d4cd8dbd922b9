/** Owners whose skills are visible to every caller. */
export const GLOBAL_OWNERS: readonly string[] = ["system", "public"];

/** True when skills of `owner` are global. */
export function isGlobalOwner(owner: string): boolean {
  return owner === "system" || owner === "public";
}

/** True when a caller with id `caller` may see (and run) a skill owned by `owner`. */
export function isVisibleTo(owner: string, caller: string | undefined): boolean {
  return caller === undefined || owner === caller || isGlobalOwner(owner);
}

/**
 * Rank used when several owners registered the same `name@version`: the caller's own
 * skill shadows the global ones; `public` is preferred over `system` after that.
 */
export function ownerPrecedence(owner: string, caller: string | undefined): number {
  if (owner === caller) return 0;
  if (owner === "public") return 1;
  if (owner === "system") return 2;
  return 3;
}
