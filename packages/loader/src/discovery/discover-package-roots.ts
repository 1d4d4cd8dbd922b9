import { readdir, readFile, realpath } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { loopTargetOf } from "./is-symlink-loop.js";
import { isSkillBundle, listBundleMembers } from "./skill-bundle.js";

async function listDirectories(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR") return [];
    throw error;
  });
  return (
    entries
      .filter((entry) => (entry.isDirectory() || entry.isSymbolicLink()) && !entry.name.startsWith("."))
      .filter((entry) => entry.name !== "node_modules")
      // A link to the folder itself or above (`plugins/all -> .`) is no package, and following it
      // would list the folder again.
      .filter(
        (entry) =>
          !entry.isSymbolicLink() || loopTargetOf(join(directory, entry.name), directory) === undefined,
      )
      .map((entry) => join(directory, entry.name))
  );
}

/** The folders a package folder stands for: itself, and a bundle's members (the bundle is read too, so a malformed field is reported). */
function expandBundle(folder: string): string[] {
  return isSkillBundle(folder) ? [folder, ...listBundleMembers(folder)] : [folder];
}

/**
 * Subfolders of `directory` that may be packages: `name/`, `@scope/name/`, and the members of
 * a bundle (`name/member/`). Missing directory → none.
 */
export async function listPackageFolders(directory: string): Promise<string[]> {
  const folders: string[] = [];
  for (const path of await listDirectories(directory)) {
    const candidates = basename(path).startsWith("@") ? await listDirectories(path) : [path];
    for (const candidate of candidates) folders.push(...expandBundle(candidate));
  }
  return folders;
}

/**
 * Installed npm packages of `projectRoot` that declare a `"skillbox"` field, as real paths (pnpm
 * links packages from its store). `pnpm add @acme/skill-weather` is all it takes to install one.
 */
export async function discoverNpmPackages(projectRoot: string): Promise<string[]> {
  const nodeModules = resolve(projectRoot, "node_modules");
  const candidates = await listPackageFolders(nodeModules);
  const found: string[] = [];
  await Promise.all(
    candidates.map(async (folder) => {
      try {
        const json = JSON.parse(await readFile(join(folder, "package.json"), "utf8")) as {
          skillbox?: unknown;
        };
        if (json.skillbox !== undefined) found.push(...expandBundle(await realpath(folder)));
      } catch {
        // Not a package (or an unreadable one): npm discovery only looks for opted-in packages.
      }
    }),
  );
  return found.sort();
}

/**
 * The top-level package folder a changed `path` belongs to, for a watched `directory` (for a
 * bundle, the bundle: the watcher then syncs every member); undefined when none.
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
