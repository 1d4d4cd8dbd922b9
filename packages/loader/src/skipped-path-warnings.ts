import { MAX_PACKAGE_DEPTH } from "./discovery/is-symlink-loop.js";
import type { LoadWarning } from "./loader-types.js";
import { displayPath } from "./manifest/read-package.js";
import { MAX_PACKAGE_FILES, type SkippedPackagePath } from "./module/hash-package-files.js";

/** How many loops or limits of one package a walk names; the rest are summed up in one more warning. */
const MAX_NAMED_SKIPPED_PATHS = 20;

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

/** The one warning for the loops and limits of `codeRoot` past {@link MAX_NAMED_SKIPPED_PATHS}. */
function summaryOf(codeRoot: string, unnamed: readonly SkippedPackagePath[]): LoadWarning {
  const loops = unnamed.filter((entry) => entry.reason === "loop").length;
  const what =
    loops === unnamed.length
      ? "symlinks that lead back into the package or a parent folder"
      : "symlinks or folders past the limits";
  return {
    code: loops > 0 ? "SYMLINK_LOOP" : "PACKAGE_TOO_LARGE",
    folder: codeRoot,
    message: `${displayPath(codeRoot)}: and ${unnamed.length} more ${what} are not followed (watched, hashed or snapshotted); only the first ${MAX_NAMED_SKIPPED_PATHS} are named`,
  };
}

/**
 * The warnings for what walks of packages left out (loops, limits), each named once while it
 * lasts: a package hashed again with the same loop warns no more, one whose loop is gone and
 * comes back warns again. At most {@link MAX_NAMED_SKIPPED_PATHS} are named per walk, then one
 * warning counts the rest, so that a hostile tree cannot flood the log.
 */
export class SkippedPathWarnings {
  /** What the last walk of each code root left out. */
  private readonly lastSkipped = new Map<string, Set<string>>();

  /** The warnings for what this walk of `codeRoot` left out that the last one did not. */
  fresh(codeRoot: string, skipped: readonly SkippedPackagePath[]): LoadWarning[] {
    const before = this.lastSkipped.get(codeRoot);
    const now = new Set<string>();
    const warnings: LoadWarning[] = [];
    const unnamed: SkippedPackagePath[] = [];
    for (const entry of skipped) {
      const key = `${entry.reason}:${entry.path}`;
      now.add(key);
      if (before?.has(key)) continue;
      if (warnings.length < MAX_NAMED_SKIPPED_PATHS) warnings.push(warningOf(codeRoot, entry));
      else unnamed.push(entry);
    }
    if (unnamed.length > 0) warnings.push(summaryOf(codeRoot, unnamed));
    if (now.size === 0) this.lastSkipped.delete(codeRoot);
    else this.lastSkipped.set(codeRoot, now);
    return warnings;
  }
}
