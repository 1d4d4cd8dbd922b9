import { SkillboxError } from "../errors/skillbox-error.js";

/** A parsed `name@range` reference. */
export interface SkillReference {
  name: string;
  /** The semver range; `undefined` when the reference named no version. */
  range: string | undefined;
}

/**
 * Splits `name@range` (and `@scope/name@range`) into its parts. The `@` of a scope
 * is not a separator.
 */
export function parseSkillReference(reference: string): SkillReference {
  if (typeof reference !== "string") throw invalidReference(reference);
  // Called on every execution by name: one scan for "@", one trim in the common case.
  const separator = reference.lastIndexOf("@");
  if (separator <= 0) {
    const name = reference.trim();
    if (name === "") throw invalidReference(reference);
    return { name, range: undefined };
  }
  // A reference with an "@" past its first character is never blank.
  const range = reference.slice(separator + 1).trim();
  return { name: reference.slice(0, separator).trim(), range: range === "" ? undefined : range };
}

function invalidReference(reference: unknown): SkillboxError {
  return new SkillboxError(
    "SKILL_REFERENCE_INVALID",
    `A skill reference must be a non-empty string such as "echo" or "echo@^1.0.0", got ${JSON.stringify(reference)}`,
  );
}
