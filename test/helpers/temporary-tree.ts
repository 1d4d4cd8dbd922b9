import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** File contents: text as is, anything else as pretty-printed JSON. */
export type TreeContent = string | Record<string, unknown> | unknown[];

/** A folder of files under the OS temp dir, for loader and file-watch tests. */
export interface TemporaryTree {
  /** Real path of the tree (symlinks resolved, so paths compare equal to what the loader reports). */
  readonly root: string;
  /** Absolute path of `relativePath` inside the tree. */
  path(...relativePath: string[]): string;
  /**
   * Writes a file, creating its folders. The content is written next to the tree and renamed into
   * place, so a watcher never sees a half-written file. Returns the absolute path.
   */
  write(relativePath: string, content: TreeContent): string;
  /**
   * Creates a whole folder of files at once (staged outside, then renamed into place), as when a
   * package is dropped into a plugins folder. Returns the folder's absolute path.
   */
  writeFolder(relativePath: string, files: Record<string, TreeContent>): string;
  /** Creates a folder (and its parents). */
  mkdir(relativePath: string): string;
  /** Deletes a file or a folder (recursively); missing is fine. */
  remove(relativePath: string): void;
  /** Creates a symlink at `relativePath` pointing to `target` (absolute, or relative to the link). */
  symlink(target: string, relativePath: string): string;
  /**
   * Makes packages installed in the repository resolvable from modules in the tree, by linking
   * them into `<root>/node_modules` (for handler modules that import `@skillbox/core` or `zod`).
   */
  linkPackages(...names: string[]): void;
  /** Deletes the whole tree. */
  cleanup(): void;
}

/** The installed folder of an npm package as Node would find it from `from` (walking up `node_modules`). */
function installedPackageFolder(name: string, from: string): string {
  for (let directory = from; ; directory = dirname(directory)) {
    const candidate = join(directory, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return realpathSync(candidate);
    if (dirname(directory) === directory) break;
  }
  throw new Error(`linkPackages: "${name}" is not installed above ${from}`);
}

function serialize(content: TreeContent): string {
  return typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`;
}

/**
 * Creates a temp tree. `resolveFrom` is where packages given to `linkPackages` are looked up
 * (default: the repository's `packages/loader`, which depends on zod and @skillbox/core).
 */
export function createTemporaryTree(
  prefix = "skillbox-tree-",
  resolveFrom = fileURLToPath(new URL("../../packages/loader", import.meta.url)),
): TemporaryTree {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  // Staging sits beside the tree, on the same filesystem, so renames are atomic and unwatched.
  const staging = realpathSync(mkdtempSync(join(tmpdir(), `${prefix}staging-`)));
  let staged = 0;
  const path = (...relativePath: string[]) => join(root, ...relativePath);
  const stagePath = () => join(staging, `${process.pid}-${staged++}`);

  const tree: TemporaryTree = {
    root,
    path,
    write(relativePath, content) {
      const target = path(relativePath);
      mkdirSync(dirname(target), { recursive: true });
      const temporary = stagePath();
      writeFileSync(temporary, serialize(content));
      renameSync(temporary, target);
      return target;
    },
    writeFolder(relativePath, files) {
      const target = path(relativePath);
      const temporary = stagePath();
      for (const [file, content] of Object.entries(files)) {
        const filePath = join(temporary, file);
        mkdirSync(dirname(filePath), { recursive: true });
        writeFileSync(filePath, serialize(content));
      }
      mkdirSync(temporary, { recursive: true });
      mkdirSync(dirname(target), { recursive: true });
      renameSync(temporary, target);
      return target;
    },
    mkdir(relativePath) {
      const target = path(relativePath);
      mkdirSync(target, { recursive: true });
      return target;
    },
    remove(relativePath) {
      rmSync(path(relativePath), { recursive: true, force: true });
    },
    symlink(target, relativePath) {
      const link = path(relativePath);
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(target, link);
      return link;
    },
    linkPackages(...names) {
      for (const name of names) {
        const link = path("node_modules", name);
        mkdirSync(dirname(link), { recursive: true });
        rmSync(link, { recursive: true, force: true });
        symlinkSync(installedPackageFolder(name, resolveFrom), link, "dir");
      }
    },
    cleanup() {
      rmSync(root, { recursive: true, force: true });
      rmSync(staging, { recursive: true, force: true });
    },
  };
  return tree;
}
