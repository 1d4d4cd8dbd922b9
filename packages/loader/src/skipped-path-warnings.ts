import { MAX_PACKAGE_DEPTH } from "./discovery/is-symlink-loop.js";
import type { LoadWarning } from "./loader-types.js";
import { displayPath } from "./manifest/read-package.js";
import { MAX_PACKAGE_FILES, type SkippedPackagePath } from "./module/hash-package-files.js";

/** The warning for one loop or limit a walk of the package at `codeRoot` left out. */
function warningOf(codeRoot: string, entry: SkippedPackagePath): LoadWarning {
  if (entry.reason === "loop") {
    return {
      code: "SYMLINK_LOOP",
      folder: entry.path,
      message: `${displayPath(entry.path)}: symlink to ${displayPath(entry.target ?? "")} leads back into its own package or a parent folder, so it is not followed (watched, hashed or snapshotted); remove the link or point it elsewhere`,
    };
  }
  return {
    code: "PACKAGE_TOO_LARGE",
    folder: entry.path,
    message:
      entry.limit === "depth"
        ? `${displayPath(codeRoot)}: folders nest deeper than ${MAX_PACKAGE_DEPTH} levels; ${displayPath(entry.path)} and what it holds are not hashed or snapshotted (flatten the folders, or move them into node_modules)`
        : `${displayPath(codeRoot)}: more than ${MAX_PACKAGE_FILES} files; files from ${displayPath(entry.path)} on are not hashed or snapshotted (move data out of the package, or into node_modules)`,
  };
}

/**
 * The warnings for what walks of packages left out (loops, limits), each named once while it
 * lasts: a package hashed again with the same loop warns no more, one whose loop is gone and
 * comes back warns again.
 */
export class SkippedPathWarnings {
  /** What the last walk of each code root left out. */
  private readonly lastSkipped = new Map<string, Set<string>>();

  /** The warnings for what this walk of `codeRoot` left out that the last one did not. */
  fresh(codeRoot: string, skipped: readonly SkippedPackagePath[]): LoadWarning[] {
    const before = this.lastSkipped.get(codeRoot);
    const now = new Set<string>();
    const warnings: LoadWarning[] = [];
    for (const entry of skipped) {
      const key = `${entry.reason}:${entry.path}`;
      now.add(key);
      if (!before?.has(key)) warnings.push(warningOf(codeRoot, entry));
    }
    if (now.size === 0) this.lastSkipped.delete(codeRoot);
    else this.lastSkipped.set(codeRoot, now);
    return warnings;
  }
}
