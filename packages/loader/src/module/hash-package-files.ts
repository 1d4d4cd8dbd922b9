import { createHash } from "node:crypto";
import { type Dirent, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { isSymlinkLoop, MAX_PACKAGE_DEPTH } from "../discovery/is-symlink-loop.js";

/** The most files of one package that are hashed, snapshotted and evaluated afresh. */
export const MAX_PACKAGE_FILES = 2_000;

/** Something a walk of a package left out, and why. */
export interface SkippedPackagePath {
  /** `loop`: a symlinked folder leading back to the package or a parent; `limit`: too many files or folders too deep. */
  reason: "loop" | "limit";
  /** The link (for `loop`), or the folder whose content was cut (for `limit`). */
  path: string;
  /** Which bound was reached (for `limit`): {@link MAX_PACKAGE_FILES} or `MAX_PACKAGE_DEPTH`. */
  limit?: "files" | "depth";
  /** The link's real target (for `loop`). */
  target?: string;
}

/** The files of a package and what the walk left out. */
export interface PackageFileListing {
  /** Absolute paths through the package folder (symlinks kept in the path), sorted. */
  files: string[];
  skipped: SkippedPackagePath[];
}

/** Listings that reached {@link MAX_PACKAGE_FILES}. */
const full = new WeakSet<PackageFileListing>();

function readEntries(directory: string): Dirent[] {
  try {
    return readdirSync(directory, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  } catch {
    return [];
  }
}

/**
 * `ancestors` are the real paths of the folders from the package root down to `directory`:
 * a symlinked folder leading back to one of them (or above) is a loop, not followed.
 */
function walk(directory: string, ancestors: string[], listing: PackageFileListing): void {
  if (ancestors.length > MAX_PACKAGE_DEPTH) {
    listing.skipped.push({ reason: "limit", limit: "depth", path: directory });
    return;
  }
  const real = ancestors[ancestors.length - 1]!;
  for (const entry of readEntries(directory)) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    if (listing.files.length >= MAX_PACKAGE_FILES) {
      // Named once, at the folder where the walk stopped.
      if (!full.has(listing)) listing.skipped.push({ reason: "limit", limit: "files", path: directory });
      full.add(listing);
      return;
    }
    const path = join(directory, entry.name);
    if (entry.isSymbolicLink()) {
      // Links are followed as what they point at: a file's content counts, a folder is walked
      // unless it leads back up (then it is named, once per walk, and left out).
      let target: string;
      let isDirectory: boolean;
      try {
        target = realpathSync(path);
        const stats = statSync(target);
        if (stats.isFile()) {
          listing.files.push(path);
          continue;
        }
        isDirectory = stats.isDirectory();
      } catch {
        continue; // Dangling.
      }
      if (!isDirectory) continue;
      if (isSymlinkLoop(target, ancestors)) listing.skipped.push({ reason: "loop", path, target });
      else walk(path, [...ancestors, target], listing);
    } else if (entry.isDirectory()) {
      walk(path, [...ancestors, join(real, entry.name)], listing);
    } else if (entry.isFile()) {
      listing.files.push(path);
    }
  }
}

/**
 * Walks a package the way the watcher, the hash and the snapshot see it: `node_modules` and
 * dotfiles skipped, symlinked files and folders followed — except folders that lead back to the
 * package or a parent of it (a loop) — and at most {@link MAX_PACKAGE_FILES} files, folders at
 * most {@link MAX_PACKAGE_DEPTH} deep.
 */
export function walkPackageFiles(root: string): PackageFileListing {
  const listing: PackageFileListing = { files: [], skipped: [] };
  let real: string;
  try {
    real = realpathSync(root);
  } catch {
    return listing;
  }
  walk(root, [real], listing);
  listing.files.sort();
  return listing;
}

/** The package's files (absolute paths, sorted), as {@link walkPackageFiles} finds them. */
export function listPackageFiles(root: string): string[] {
  return walkPackageFiles(root).files;
}

/** Options of {@link hashPackageFiles}. */
export interface HashPackageFilesOptions {
  /** Told about each loop or limit that left something out. */
  onSkipped?: (skipped: SkippedPackagePath) => void;
}

function readContent(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch {
    return Buffer.alloc(0);
  }
}

/**
 * Hash of a package's files (names and contents, as {@link walkPackageFiles} lists them). It goes
 * into the registry with the skill, so an edit to any file — the handler or a helper it imports —
 * changes the stored definition (other processes and worker pools notice), while an untouched
 * package is not rewritten on restart.
 *
 * Synchronous file access on purpose: packages are a handful of small files, and at start-up a
 * thousand packages hash several times faster without a thread-pool round trip per file.
 */
export async function hashPackageFiles(root: string, options: HashPackageFilesOptions = {}): Promise<string> {
  const { files, skipped } = walkPackageFiles(root);
  if (options.onSkipped !== undefined) for (const entry of skipped) options.onSkipped(entry);
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(relative(root, file)).update("\0");
    hash.update(readContent(file)).update("\0");
  }
  return hash.digest("hex").slice(0, 32);
}
