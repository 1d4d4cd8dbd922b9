import { realpathSync, type Stats, statSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { isSkippedPath } from "./package-paths.js";

function realPathOf(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Which path the watcher watches each real folder of a package by, for chokidar's `ignored`
 * (which decides path by path): a folder inside the package by its own path, a linked folder
 * elsewhere by the first path it is reached by — so a folder reached through many links (a ring
 * of folders linking each other) is watched once per package, not once per path, while edits in
 * it still reload the package. The same choice as the package walk (`walkPackageFiles`).
 */
export class WatchedFolderClaims {
  /** Per top-level package folder: real folder → the path it is watched by. */
  private readonly claims = new Map<string, Map<string, string>>();

  /**
   * Whether `path`, in the top-level package folder `top`, is a folder already watched by
   * another path (chokidar should then leave it out). `stats`, when chokidar has them, saves a
   * `stat`.
   */
  ignores(path: string, top: string, stats?: Stats): boolean {
    if (path === top) return false;
    try {
      if (!(stats ?? statSync(path)).isDirectory()) return false;
    } catch {
      return false; // Gone or dangling.
    }
    const real = realPathOf(path);
    const topReal = realPathOf(top);
    if (real === undefined || topReal === undefined) return false;
    let claims = this.claims.get(top);
    if (claims === undefined) {
      claims = new Map();
      this.claims.set(top, claims);
    }
    // Reached without a link on the way: this is the folder's own path.
    if (real === join(topReal, relative(top, path))) {
      claims.set(real, path);
      return false;
    }
    // A link to a folder of the package that is watched by its own path anyway.
    const inside = relative(topReal, real);
    if (inside !== "" && !inside.startsWith("..") && !isAbsolute(inside) && !isSkippedPath(inside))
      return true;
    const claimed = claims.get(real);
    if (claimed === undefined || claimed === path) {
      claims.set(real, path);
      return false;
    }
    return true;
  }

  /** Forgets the folders watched by `path` or below it (removed), so another path can claim them. */
  release(path: string, top: string): void {
    const claims = this.claims.get(top);
    if (claims === undefined) return;
    for (const [real, claimed] of claims) {
      if (claimed === path || claimed.startsWith(path + sep)) claims.delete(real);
    }
  }
}
