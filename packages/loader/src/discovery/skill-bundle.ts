import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * Whether `folder` is a skill bundle: a package whose package.json says
 * `"skillbox": { "kind": "bundle" }`. A bundle is not a skill itself; each subfolder with a
 * manifest is one (a member), and members share the bundle's other files (a `lib/` folder) and
 * dependencies. Synchronous because the watcher maps every changed path through it.
 */
export function isSkillBundle(folder: string): boolean {
  return packageJsonKindOf(folder) === "bundle";
}

/**
 * What `folder`'s package.json says it is: `bundle`, `other` (no package.json, or one that is
 * not a bundle) or `unreadable` (there is one, but it does not parse — mid-edit, say — so whether
 * the folder is a bundle cannot be told; reading the package reports why).
 */
export function packageJsonKindOf(folder: string): "bundle" | "other" | "unreadable" {
  let text: string;
  try {
    text = readFileSync(join(folder, "package.json"), "utf8");
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

/** The subfolders of a bundle that may be members (those without a manifest are shared code and skipped later). */
export function listBundleMembers(bundle: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(bundle, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith(".") && entry.name !== "node_modules")
    .map((entry) => join(bundle, entry.name))
    .sort();
}

/**
 * The folder whose files make up a package's code: the bundle for a member (which imports the
 * bundle's shared files), the package itself otherwise. Hashes and snapshots cover this folder,
 * so an edit to shared code reloads every member and a snapshot keeps `../lib` imports working.
 */
export function codeRootOf(root: string): string {
  const parent = dirname(root);
  return parent !== root && isSkillBundle(parent) ? parent : root;
}
