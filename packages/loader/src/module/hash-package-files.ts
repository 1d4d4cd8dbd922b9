import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";

const MAX_FILES = 2_000;

async function listFiles(directory: string, found: string[]): Promise<void> {
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (found.length >= MAX_FILES) return;
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const path = join(directory, entry.name);
    if (entry.isDirectory()) await listFiles(path, found);
    else if (entry.isFile()) found.push(path);
  }
}

/**
 * Hash of a package's files (names and contents; `node_modules` and dotfiles skipped). It goes
 * into the registry with the skill, so an edit to any file — the handler or a helper it imports —
 * changes the stored definition (other processes and worker pools notice), while an untouched
 * package is not rewritten on restart.
 */
export async function hashPackageFiles(root: string): Promise<string> {
  const files: string[] = [];
  await listFiles(root, files);
  files.sort();
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(relative(root, file)).update("\0");
    hash.update(await readFile(file).catch(() => Buffer.alloc(0))).update("\0");
  }
  return hash.digest("hex").slice(0, 32);
}
