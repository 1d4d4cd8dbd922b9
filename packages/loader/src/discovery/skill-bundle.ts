import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * Whether `folder` is a skill bundle: a package whose package.json says
 * `"skillbox": { "kind": "bundle" }`. A bundle is not a skill itself; each subfolder with a
 * manifest is one (a member), and members share the bundle's other files (a `lib/` folder) and
 * dependencies. Synchronous because the watcher maps every changed path through it.
 */
export function isSkillBundle(folder: string): boolean {
  try {
    const json = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as {
      skillbox?: { kind?: unknown };
    };
    return json.skillbox?.kind === "bundle";
  } catch {
    // No package.json, or one that does not parse: reading the package reports the latter.
    return false;
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
