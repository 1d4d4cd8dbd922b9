import type { TemporaryTree } from "./temporary-tree.js";

/** Options of {@link makeSymlinkRing}. */
export interface SymlinkRingOptions {
  /** The folder (relative to the tree) that holds the ring, a package say. */
  folder: string;
  /** How many sibling folders form the ring (`r0` … `r<length-1>`). */
  length: number;
  /** How many links each folder has to the next one (`n0` …). */
  linksPerFolder: number;
}

/**
 * Builds a ring of sibling folders, each holding one real file (`file.txt`) and
 * `linksPerFolder` links to the next (`r0/n0 -> ../r1`, …, the last back to `r0`). A walk that
 * catches loops only per path visits linksPerFolder^length paths; one that enters every real
 * folder once reads `length` folders. Returns the paths of the links.
 */
export function makeSymlinkRing(tree: TemporaryTree, options: SymlinkRingOptions): string[] {
  const { folder, length, linksPerFolder } = options;
  const links: string[] = [];
  for (let index = 0; index < length; index++) tree.write(`${folder}/r${index}/file.txt`, `${index}\n`);
  for (let index = 0; index < length; index++) {
    for (let link = 0; link < linksPerFolder; link++) {
      links.push(tree.symlink(`../r${(index + 1) % length}`, `${folder}/r${index}/n${link}`));
    }
  }
  return links;
}
