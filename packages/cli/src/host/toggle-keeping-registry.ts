import { type Skill, type SkillRegistration, SkillRegistry } from "@skillbox/core";
import { LOADER_MARK } from "@skillbox/loader";

/** The loader's hash of a package's files, kept in `metadata.codeHash`. */
function codeHashOf(metadata: unknown): string | undefined {
  const fields = metadata as { loader?: unknown; codeHash?: unknown } | undefined;
  return fields?.loader === LOADER_MARK && typeof fields.codeHash === "string" ? fields.codeHash : undefined;
}

/**
 * A registry on which `skillbox enable` / `disable` survive the next load. The loader registers
 * every package with the manifest's `enabled` (default true), which would re-enable a skill an
 * operator disabled each time any command loads the folders. Here a loader registration of a
 * package whose files did not change keeps the stored flag; once the package is edited, its
 * manifest decides again.
 */
export class ToggleKeepingRegistry extends SkillRegistry {
  override registerMany(registrations: readonly SkillRegistration[]): Skill[] {
    return super.registerMany(registrations.map((registration) => this.keepToggle(registration)));
  }

  private keepToggle(registration: SkillRegistration): SkillRegistration {
    const codeHash = codeHashOf(registration.metadata);
    if (codeHash === undefined) return registration;
    const owner = registration.apiKeyId ?? "system";
    const stored = this.getSkillVersions(registration.name, owner).find(
      (skill) => skill.apiKeyId === owner && skill.version === registration.version,
    );
    if (stored === undefined || codeHashOf(stored.metadata) !== codeHash) return registration;
    return stored.enabled === (registration.enabled ?? true)
      ? registration
      : { ...registration, enabled: stored.enabled };
  }
}
