import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { walkPackageFiles } from "./hash-package-files.js";

/** Where a package's snapshots live: inside its own node_modules, which watchers and hashes skip. */
const SNAPSHOT_FOLDER = join("node_modules", ".skillbox-snapshots");

/**
 * Copies the package's files (without `node_modules` and dotfiles; a folder reached twice is
 * copied once and linked from the other path) to
 * `<root>/node_modules/.skillbox-snapshots/<codeHash>/`, once per code hash, and returns that
 * folder. Worker threads load a skill's code from disk; loading it from the snapshot of the last
 * version that passed the reload check means a later broken edit cannot reach them. Inside the
 * package, bare imports still resolve through its (and its parents') node_modules. Only the
 * newest `keep` snapshots are kept, so executions still running an older one can finish.
 */
export function snapshotPackage(root: string, codeHash: string, keep = 2): string {
  const parent = join(root, SNAPSHOT_FOLDER);
  const target = join(parent, codeHash);
  if (!existsSync(target)) {
    const staging = `${target}.${process.pid}.tmp`;
    rmSync(staging, { recursive: true, force: true });
    // File by file: fs.cp refuses to copy a folder into its own subfolder, filter or not.
    const { files, aliases } = walkPackageFiles(root);
    for (const file of files) {
      const copy = join(staging, relative(root, file));
      mkdirSync(dirname(copy), { recursive: true });
      copyFileSync(file, copy);
    }
    // A folder reached by a second path is copied once and linked there, so imports through
    // either path resolve in the snapshot as they do in the package.
    for (const alias of aliases) {
      const link = join(staging, relative(root, alias.path));
      const first = join(staging, relative(root, alias.sameAs));
      mkdirSync(first, { recursive: true });
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(relative(dirname(link), first), link, "dir");
    }
    renameSync(staging, target);
  }
  pruneSnapshots(parent, basename(target), keep);
  return target;
}

function pruneSnapshots(parent: string, current: string, keep: number): void {
  const others = readdirSync(parent)
    .filter((name) => name !== current && !name.endsWith(".tmp"))
    .map((name) => ({ name, modified: statSync(join(parent, name)).mtimeMs }))
    .sort((a, b) => b.modified - a.modified);
  for (const stale of others.slice(Math.max(0, keep - 1))) {
    rmSync(join(parent, stale.name), { recursive: true, force: true });
  }
}
