import { createHash } from "node:crypto";
import type { Skill } from "@skillbox/core";

/**
 * What a job says about the code it was submitted for: sha256 of the skill's definition hash
 * (manifest: schemas, runtime, limits) and its code hash (the package's files), as the submitting
 * host loaded them. A worker whose own copy hashes otherwise answers `SKILL_VERSION_MISMATCH`
 * rather than run other code under the same `name@version`. A skill registered by code has no
 * package files: only its definition counts.
 */
export function skillContentHash(skill: Skill): string {
  return createHash("sha256")
    .update(skill.contentHash)
    .update("\0")
    .update(skill.code?.codeHash ?? "")
    .digest("hex");
}
