import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join, relative } from "node:path";
import { makeSymlinkRing } from "@skillbox/test-helpers/symlink-ring";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
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

  it("copies each real file of a ring of 8 folders with 3 links each once, keeping the links as links", async () => {
    tree.write("pkg/skill.json", { name: "echo" });
    tree.write("pkg/index.ts", 'export { default } from "./r0/n1/n2/file.txt";\n');
    makeSymlinkRing(tree, { folder: "pkg", length: 8, linksPerFolder: 3 });
    const root = tree.path("pkg");

    const snapshot = snapshotPackage(root, await hashPackageFiles(root));

    expect(filesUnder(snapshot)).toEqual([
      "index.ts",
      ...Array.from({ length: 8 }, (_, index) => `r${index}/file.txt`),
      "skill.json",
    ]);
    // An import through a link still resolves inside the snapshot.
    expect(readlinkSync(join(snapshot, "r0/n1"))).toBe("../r1");
    expect(readFileSync(join(snapshot, "r0/n1/n2/file.txt"), "utf8")).toBe("2\n");
  });
});
