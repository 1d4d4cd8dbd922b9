import { type Dirent, existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";

/**
 * Whether a folder entry named `name` is one every walk of packages skips — discovery, the
 * watcher, the hash and the snapshot: dotfiles and `node_modules`.
 */
export function isSkippedName(name: string): boolean {
  return name.startsWith(".") || name === "node_modules";
}

/** Whether `path`, relative to a package, goes through a skipped name (see {@link isSkippedName}). */
export function isSkippedPath(path: string): boolean {
  return path.split(sep).some(isSkippedName);
}

/**
 * What `folder`'s package.json says it is: `bundle`, `other` (no package.json, or one that is
 * not a bundle) or `unreadable` (there is one, but it does not parse — mid-edit, say — so whether
 * the folder is a bundle cannot be told; reading the package reports why). Synchronous because
 * the watcher maps every changed path through it.
 */
function packageJsonKindOf(folder: string): "bundle" | "other" | "unreadable" {
  const file = join(folder, "package.json");
  // Most folders asked about have none: answered without the cost of a thrown ENOENT.
  if (!existsSync(file)) return "other";
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR" ? "other" : "unreadable";
  }
  try {
    const json = JSON.parse(text) as { skillbox?: { kind?: unknown } } | null;
    return json?.skillbox?.kind === "bundle" ? "bundle" : "other";
  } catch {
    return "unreadable";
  }
}

/**
 * Whether `folder` is a skill bundle: a package whose package.json says
 * `"skillbox": { "kind": "bundle" }`. A bundle is not a skill itself; each subfolder with a
 * manifest is one (a member), and members share the bundle's other files (a `lib/` folder) and
 * dependencies.
 */
function isSkillBundle(folder: string): boolean {
  return packageJsonKindOf(folder) === "bundle";
}

/** The subfolders of a bundle that may be members (those without a manifest are shared code and skipped later). */
function listBundleMembers(bundle: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(bundle, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isDirectory() && !isSkippedName(entry.name))
    .map((entry) => join(bundle, entry.name))
    .sort();
}

/** The folders a package folder stands for: itself, and a bundle's members (the bundle is read too, so a malformed field is reported). */
export function packageFoldersOf(folder: string): string[] {
  return isSkillBundle(folder) ? [folder, ...listBundleMembers(folder)] : [folder];
}

/**
 * The folder whose files make up a package's code: the bundle for a member (which imports the
 * bundle's shared files), the package itself otherwise. Hashes and snapshots cover this folder,
 * so an edit to shared code reloads every member and a snapshot keeps `../lib` imports working.
 */
function codeRootOf(root: string): string {
  const parent = dirname(root);
  return parent !== root && isSkillBundle(parent) ? parent : root;
}

/**
 * The top-level package folder a `path` in the watched `directory` belongs to (`name/`,
 * `@scope/name/`; for a path in a bundle, the bundle); undefined when none.
 */
export function packageRootOf(directory: string, path: string): string | undefined {
  const relativeParts = resolve(path)
    .slice(resolve(directory).length + 1)
    .split(/[\\/]/);
  if (relativeParts[0] === undefined || relativeParts[0] === "") return undefined;
  if (relativeParts[0].startsWith("@")) {
    return relativeParts[1] === undefined
      ? undefined
      : join(resolve(directory), relativeParts[0], relativeParts[1]);
  }
  return join(resolve(directory), relativeParts[0]);
}

/** Whether `path` is `folder` or lies inside it. */
function isSameOrInside(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder + sep);
}

/**
 * What a path belongs to, for one loader's watched folders: the watched folder, the top-level
 * package folder, the bundle, the code root. The loader, its reconciler and the watcher ask here
 * and nowhere else.
 */
export class PackagePaths {
  /** The watched folders (absolute). */
  readonly watchedFolders: readonly string[];

  constructor(watchedFolders: readonly string[]) {
    this.watchedFolders = watchedFolders;
  }

  /**
   * The watched folder that contains `path` — the longest one, so `plugins` never claims
   * `plugins-extra/…` — or undefined when none does.
   */
  watchedFolderOf(path: string): string | undefined {
    let found: string | undefined;
    for (const directory of this.watchedFolders) {
      if (path.startsWith(directory + sep) && directory.length > (found?.length ?? -1)) found = directory;
    }
    return found;
  }

  /**
   * The top-level package folder of a path in a watched folder (`name/`, `@scope/name/`, or the
   * bundle for a path in one of its members); undefined for paths outside the watched folders.
   */
  topFolderOf(path: string): string | undefined {
    const directory = this.watchedFolderOf(path);
    return directory === undefined ? undefined : packageRootOf(directory, path);
  }

  /** The package folder's code root (see {@link codeRootOf}). */
  codeRootOf(root: string): string {
    return codeRootOf(root);
  }

  /**
   * Whether `root` lies inside a top-level folder whose package.json does not parse: whether it
   * is still a bundle member cannot be told, so the member keeps its last good version.
   */
  isInUnreadableBundle(root: string): boolean {
    const top = this.topFolderOf(root);
    return top !== undefined && top !== root && packageJsonKindOf(top) === "unreadable";
  }

  /**
   * The package folders a sync of `folder` covers: the folder, the known roots inside it, and
   * for a bundle every member on disk (they share its code), so members known before that are
   * gone now are synced (and removed) too.
   */
  foldersToSync(folder: string, knownRoots: Iterable<string>): string[] {
    const roots = new Set([folder]);
    for (const root of knownRoots) if (isSameOrInside(root, folder)) roots.add(root);
    if (isSkillBundle(folder)) for (const member of listBundleMembers(folder)) roots.add(member);
    return [...roots].sort();
  }
}
