import { readdir, readFile, realpath } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { isSkippedName, packageFoldersOf } from "../package-paths.js";
import { loopTargetOf } from "./is-symlink-loop.js";

async function listDirectories(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR") return [];
    throw error;
  });
  return (
    entries
      .filter((entry) => (entry.isDirectory() || entry.isSymbolicLink()) && !isSkippedName(entry.name))
      // A link to the folder itself or above (`plugins/all -> .`) is no package, and following it
      // would list the folder again.
      .filter(
        (entry) =>
          !entry.isSymbolicLink() || loopTargetOf(join(directory, entry.name), directory) === undefined,
      )
      .map((entry) => join(directory, entry.name))
  );
}

/**
 * Subfolders of `directory` that may be packages: `name/`, `@scope/name/`, and the members of
 * a bundle (`name/member/`). Missing directory → none.
 */
export async function listPackageFolders(directory: string): Promise<string[]> {
  const folders: string[] = [];
  for (const path of await listDirectories(directory)) {
    const candidates = basename(path).startsWith("@") ? await listDirectories(path) : [path];
    for (const candidate of candidates) folders.push(...packageFoldersOf(candidate));
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
        if (json.skillbox !== undefined) found.push(...packageFoldersOf(await realpath(folder)));
      } catch {
        // Not a package (or an unreadable one): npm discovery only looks for opted-in packages.
      }
    }),
  );
  return found.sort();
}
