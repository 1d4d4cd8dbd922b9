import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTemporaryTree, type TemporaryTree } from "../../../../test/helpers/temporary-tree.js";
import { hashPackageFiles } from "../../src/module/hash-package-files.js";
import { snapshotPackage } from "../../src/module/snapshot-package.js";

let tree: TemporaryTree;

beforeEach(() => {
  tree = createTemporaryTree();
});

afterEach(() => {
  tree.cleanup();
});

/** Every file under `folder`, relative to it, sorted. */
function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)))
    .sort();
}

describe("snapshotPackage", () => {
  it("copies what symlinks point at, and leaves out links that loop back into the package", async () => {
    tree.write("pkg/skill.json", { name: "echo" });
    tree.write("pkg/index.ts", 'export { word } from "./shared/word.ts";\n');
    tree.write("elsewhere/shared/word.ts", 'export const word = "linked";\n');
    tree.symlink(tree.path("elsewhere/shared"), "pkg/shared");
    tree.symlink(".", "pkg/loop-a");
    tree.symlink(".", "pkg/loop-b");
    const root = tree.path("pkg");

    const snapshot = snapshotPackage(root, await hashPackageFiles(root));

    expect(filesUnder(snapshot)).toEqual(["index.ts", "shared/word.ts", "skill.json"]);
    expect(readFileSync(join(snapshot, "shared/word.ts"), "utf8")).toContain("linked");
  });
});
