import { createHash } from "node:crypto";
import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const MAX_FILES = 2_000;

function listFiles(directory: string, found: string[]): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    if (found.length >= MAX_FILES) return;
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const path = join(directory, entry.name);
    if (entry.isDirectory()) listFiles(path, found);
    else if (entry.isFile()) found.push(path);
  }
}

function readContent(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch {
    return Buffer.alloc(0);
  }
}

/** The package's files (absolute paths, sorted; `node_modules` and dotfiles skipped). */
export function listPackageFiles(root: string): string[] {
  const files: string[] = [];
  listFiles(root, files);
  return files.sort();
}

/**
 * Hash of a package's files (names and contents; `node_modules` and dotfiles skipped). It goes
 * into the registry with the skill, so an edit to any file — the handler or a helper it imports —
 * changes the stored definition (other processes and worker pools notice), while an untouched
 * package is not rewritten on restart.
 *
 * Synchronous file access on purpose: packages are a handful of small files, and at start-up a
 * thousand packages hash several times faster without a thread-pool round trip per file.
 */
export async function hashPackageFiles(root: string): Promise<string> {
  const files = listPackageFiles(root);
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(relative(root, file)).update("\0");
    hash.update(readContent(file)).update("\0");
  }
  return hash.digest("hex").slice(0, 32);
}
