import { lstatSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, relative } from "node:path";

/** How deep folders in a package are followed (watch, hash, snapshot): far past any real layout. */
export const MAX_PACKAGE_DEPTH = 32;

/** Whether `inner` is `outer` or lies inside it (both real paths). */
function isSameOrInside(inner: string, outer: string): boolean {
  const path = relative(outer, inner);
  return path === "" || (!path.startsWith("..") && !isAbsolute(path));
}

/**
 * Whether a symlinked folder whose target is `target` (a real path) leads back into a loop: to
 * one of the folders it is reached through, `ancestors` (real paths), or to a parent of one of
 * them — `link -> .`, `link -> ..`, `link -> /`. Following such a link never ends: two links to
 * `.` alone make 2^depth paths. Links to anywhere else are followed.
 */
export function isSymlinkLoop(target: string, ancestors: Iterable<string>): boolean {
  for (const ancestor of ancestors) if (isSameOrInside(ancestor, target)) return true;
  return false;
}

/**
 * For a path met while walking `top` (a watched folder): the real target when `path` is a
 * symlinked folder leading into a loop (see {@link isSymlinkLoop}), judged against the real
 * paths of the folders between it and `top`; undefined for anything else. Synchronous, for
 * chokidar's `ignored` callback.
 */
export function loopTargetOf(path: string, top: string): string | undefined {
  try {
    if (!lstatSync(path).isSymbolicLink() || !statSync(path).isDirectory()) return undefined;
    const target = realpathSync(path);
    const ancestors: string[] = [];
    for (let folder = dirname(path); ; folder = dirname(folder)) {
      ancestors.push(realpathSync(folder));
      if (!isSameOrInside(folder, top) || folder === top || dirname(folder) === folder) break;
    }
    return isSymlinkLoop(target, ancestors) ? target : undefined;
  } catch {
    // Gone or dangling: nothing to follow.
    return undefined;
  }
}
