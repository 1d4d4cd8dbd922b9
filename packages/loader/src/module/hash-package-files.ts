import { createHash } from "node:crypto";
import { channel } from "node:diagnostics_channel";
import { type Dirent, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { isSymlinkLoop, MAX_PACKAGE_DEPTH } from "../discovery/is-symlink-loop.js";
import { isSkippedName } from "../package-paths.js";
import { PublishedFiles } from "./published-files.js";

/**
 * Told `{ root }` each time a package is hashed: how often a load or a reload reads a package's
 * files, for tests and diagnostics (`diagnostics_channel.subscribe("skillbox:loader:package-hashed", …)`).
 */
const PACKAGE_HASHED_CHANNEL = "skillbox:loader:package-hashed";
const packageHashed = channel(PACKAGE_HASHED_CHANNEL);

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

/** A symlinked folder whose real folder the walk already entered by another path. */
export interface PackageFolderAlias {
  /** The link (or a folder reached through a link). */
  path: string;
  /** The path the walk entered that real folder by: its files are listed under it. */
  sameAs: string;
}

/** The files of a package and what the walk left out. */
export interface PackageFileListing {
  /** Absolute paths through the package folder (symlinks kept in the path), sorted. */
  files: string[];
  /** The folders read, each real folder once, by the path it was entered by. */
  folders: string[];
  /** Folders not entered because their real folder was entered by another path, sorted by path. */
  aliases: PackageFolderAlias[];
  skipped: SkippedPackagePath[];
  /** The folders (relative to the package, `""` for itself) that hold a `.npmignore`. */
  ignoreFolders: string[];
}

/** A symlinked folder met while reading a folder, followed once the real folders are read. */
interface PendingLink {
  path: string;
  target: string;
  /** Real paths of the folders from the package root down to the link's folder. */
  ancestors: string[];
}

/** One walk of a package. */
interface Walk {
  /** The package folder, as given. */
  root: string;
  listing: PackageFileListing;
  /** Real folder → the path it was entered by: every real folder is read at most once. */
  entered: Map<string, string>;
  links: PendingLink[];
  full: boolean;
}

function readEntries(directory: string): Dirent[] {
  try {
    return readdirSync(directory, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  } catch {
    return [];
  }
}

/**
 * Reads `directory` and the real folders under it; symlinked folders are queued (see
 * {@link walkPackageFiles}). `ancestors` are the real paths of the folders from the package root
 * down to `directory`.
 */
function readFolder(directory: string, ancestors: string[], walk: Walk): void {
  const { listing } = walk;
  if (ancestors.length > MAX_PACKAGE_DEPTH) {
    listing.skipped.push({ reason: "limit", limit: "depth", path: directory });
    return;
  }
  const real = ancestors[ancestors.length - 1]!;
  const first = walk.entered.get(real);
  if (first !== undefined) {
    // A real folder under a linked one that another path already entered.
    listing.aliases.push({ path: directory, sameAs: first });
    return;
  }
  walk.entered.set(real, directory);
  listing.folders.push(directory);
  for (const entry of readEntries(directory)) {
    if (entry.name === ".npmignore") listing.ignoreFolders.push(relative(walk.root, directory));
    if (isSkippedName(entry.name)) continue;
    if (listing.files.length >= MAX_PACKAGE_FILES) {
      // Named once, at the folder where the walk stopped.
      if (!walk.full) listing.skipped.push({ reason: "limit", limit: "files", path: directory });
      walk.full = true;
      return;
    }
    const path = join(directory, entry.name);
    if (entry.isSymbolicLink()) {
      // Links are followed as what they point at: a file's content counts; a folder waits until
      // the real folders are read, so that a folder inside the package is entered by its own path.
      try {
        const target = realpathSync(path);
        const stats = statSync(target);
        if (stats.isFile()) listing.files.push(path);
        else if (stats.isDirectory()) walk.links.push({ path, target, ancestors });
      } catch {
        // Dangling.
      }
    } else if (entry.isDirectory()) {
      readFolder(path, [...ancestors, join(real, entry.name)], walk);
    } else if (entry.isFile()) {
      listing.files.push(path);
    }
  }
}

/** Follows a queued folder link: a loop is named and left out, an alias noted, anything else read. */
function followLink(link: PendingLink, walk: Walk): void {
  const { listing } = walk;
  if (isSymlinkLoop(link.target, link.ancestors)) {
    listing.skipped.push({ reason: "loop", path: link.path, target: link.target });
    return;
  }
  const first = walk.entered.get(link.target);
  if (first !== undefined) listing.aliases.push({ path: link.path, sameAs: first });
  else readFolder(link.path, [...link.ancestors, link.target], walk);
}

/**
 * Walks a package the way the watcher, the hash and the snapshot see it: `node_modules` and
 * dotfiles skipped, symlinked files and folders followed — except folders that lead back to the
 * package or a parent of it (a loop) — and at most {@link MAX_PACKAGE_FILES} files, folders at
 * most {@link MAX_PACKAGE_DEPTH} deep.
 *
 * Every real folder is read at most once, so a walk is linear in the real files and folders
 * however links cross (a ring of folders linking each other thrice once made 3^length paths):
 * real folders first, by their own paths, then linked folders in the order met; a link to a
 * folder already read is an alias (its files are listed under the first path).
 */
export function walkPackageFiles(root: string): PackageFileListing {
  const listing: PackageFileListing = { files: [], folders: [], aliases: [], skipped: [], ignoreFolders: [] };
  let real: string;
  try {
    real = realpathSync(root);
  } catch {
    return listing;
  }
  const walk: Walk = { root, listing, entered: new Map(), links: [], full: false };
  readFolder(root, [real], walk);
  // The queue grows while it is read: linked folders hold links of their own.
  for (let index = 0; index < walk.links.length && !walk.full; index++) followLink(walk.links[index]!, walk);
  listing.files.sort();
  listing.aliases.sort((a, b) => (a.path < b.path ? -1 : 1));
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
 * Hash of a package's files (names and contents, as {@link walkPackageFiles} lists them, of those
 * a published package holds: see `PublishedFiles` — not `test/`, nor what `files` or
 * `.npmignore` leave out). It goes into the registry with the skill, so an edit to any file — the
 * handler or a helper it imports — changes the stored definition (other processes and worker
 * pools notice), while an untouched package is not rewritten on restart, and editing a test
 * reloads nothing.
 *
 * Synchronous file access on purpose: packages are a handful of small files, and at start-up a
 * thousand packages hash several times faster without a thread-pool round trip per file.
 */
export async function hashPackageFiles(root: string, options: HashPackageFilesOptions = {}): Promise<string> {
  if (packageHashed.hasSubscribers) packageHashed.publish({ root });
  const { files, aliases, skipped, ignoreFolders } = walkPackageFiles(root);
  if (options.onSkipped !== undefined) for (const entry of skipped) options.onSkipped(entry);
  const published = PublishedFiles.read(root, { ignoreFolders: new Set(ignoreFolders) });
  const hash = createHash("sha256");
  for (const file of files) {
    const path = relative(root, file);
    if (!published.includes(path)) continue;
    hash.update(path).update("\0");
    hash.update(readContent(file)).update("\0");
  }
  // An added alias is an edit too: the snapshot has to gain the link (a handler may import through it).
  for (const alias of aliases) {
    if (!published.includes(relative(root, alias.path))) continue;
    hash.update("\0alias\0").update(relative(root, alias.path)).update("\0");
    hash.update(relative(root, alias.sameAs)).update("\0");
  }
  return hash.digest("hex").slice(0, 32);
}
