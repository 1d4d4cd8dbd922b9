import { makeSymlinkRing } from "@skillbox/test-helpers/symlink-ring";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  hashPackageFiles,
  listPackageFiles,
  MAX_PACKAGE_FILES,
  walkPackageFiles,
} from "../../src/module/hash-package-files.js";

let tree: TemporaryTree;

beforeEach(() => {
  tree = createTemporaryTree();
  tree.write("pkg/skill.json", { name: "echo" });
  tree.write("pkg/index.ts", "export default () => 1;\n");
  tree.write("pkg/lib/helper.ts", "export const x = 1;\n");
});

afterEach(() => {
  tree.cleanup();
});

const hash = () => hashPackageFiles(tree.path("pkg"));

describe("hashPackageFiles", () => {
  it("is stable for unchanged files and independent of the folder's location", async () => {
    const first = await hash();
    expect(await hash()).toBe(first);
    tree.write("copy/skill.json", { name: "echo" });
    tree.write("copy/index.ts", "export default () => 1;\n");
    tree.write("copy/lib/helper.ts", "export const x = 1;\n");
    expect(await hashPackageFiles(tree.path("copy"))).toBe(first);
  });

  it("changes when a helper in a subfolder changes", async () => {
    const before = await hash();
    tree.write("pkg/lib/helper.ts", "export const x = 2;\n");
    expect(await hash()).not.toBe(before);
  });

  it("changes when a file is added, removed or renamed", async () => {
    const original = await hash();
    tree.write("pkg/lib/other.ts", "export {};\n");
    const added = await hash();
    expect(added).not.toBe(original);
    tree.remove("pkg/lib/other.ts");
    expect(await hash()).toBe(original);
    tree.remove("pkg/lib/helper.ts");
    tree.write("pkg/lib/renamed.ts", "export const x = 1;\n");
    expect(await hash()).not.toBe(original);
  });

  it("ignores node_modules and dotfiles", async () => {
    const before = await hash();
    tree.write("pkg/node_modules/dependency/index.js", "module.exports = 1;\n");
    tree.write("pkg/.cache/state", "anything");
    tree.write("pkg/.DS_Store", "anything");
    expect(await hash()).toBe(before);
  });

  it("follows symlinked files and folders: their content counts", async () => {
    tree.write("elsewhere/shared/word.ts", 'export const word = "one";\n');
    tree.write("elsewhere/notes.md", "one\n");
    tree.symlink(tree.path("elsewhere/shared"), "pkg/shared");
    tree.symlink("../elsewhere/notes.md", "pkg/notes.md");
    expect(listPackageFiles(tree.path("pkg"))).toEqual(
      ["pkg/index.ts", "pkg/lib/helper.ts", "pkg/notes.md", "pkg/shared/word.ts", "pkg/skill.json"].map(
        (file) => tree.path(file),
      ),
    );
    const before = await hash();
    tree.write("elsewhere/shared/word.ts", 'export const word = "two";\n');
    const afterFolderEdit = await hash();
    expect(afterFolderEdit).not.toBe(before);
    tree.write("elsewhere/notes.md", "two\n");
    expect(await hash()).not.toBe(afterFolderEdit);
  });

  it.each([2, 3])("visits each real file once with %d symlinks to `.`, naming each link", async (links) => {
    const linkPaths = Array.from({ length: links }, (_, index) => tree.symlink(".", `pkg/loop-${index}`));
    const listing = walkPackageFiles(tree.path("pkg"));
    // The bound: the package's three real files, not 3 × 2^depth.
    expect(listing.files).toHaveLength(3);
    expect(listing.skipped).toEqual(
      linkPaths.map((path) => ({ reason: "loop", path, target: tree.path("pkg") })),
    );
  });

  it("does not follow links to a parent folder or the filesystem root, nor loops through two packages", async () => {
    tree.symlink("..", "pkg/up");
    tree.symlink("/", "pkg/lib/root");
    tree.write("other/file.ts", "export {};\n");
    tree.symlink(tree.path("other"), "pkg/other");
    tree.symlink(tree.path("pkg"), "other/back");
    const listing = walkPackageFiles(tree.path("pkg"));
    expect(listing.files).toHaveLength(4);
    expect(listing.files).toContain(tree.path("pkg/other/file.ts"));
    expect(listing.skipped.map((entry) => entry.path).sort()).toEqual(
      [tree.path("pkg/lib/root"), tree.path("pkg/other/back"), tree.path("pkg/up")].sort(),
    );
  });

  it("enters each real folder once in a ring of 8 folders with 3 links each to the next", async () => {
    // Loops caught per path alone walked 3^8 paths here (thousands of warnings, hundreds of MB).
    const links = makeSymlinkRing(tree, { folder: "pkg", length: 8, linksPerFolder: 3 });
    const listing = walkPackageFiles(tree.path("pkg"));
    // The package's three files and one per ring folder; pkg, lib and r0…r7 read once each.
    expect(listing.files).toHaveLength(11);
    expect(listing.folders).toHaveLength(10);
    expect(new Set(listing.folders).size).toBe(10);
    // Every link leads to a folder already walked by its real path: kept as an alias, not walked.
    expect(listing.skipped).toEqual([]);
    expect(listing.aliases.map((alias) => alias.path).sort()).toEqual([...links].sort());
    expect(listing.aliases).toContainEqual({ path: tree.path("pkg/r7/n0"), sameAs: tree.path("pkg/r0") });
  });

  it("walks a folder reached by two links once, and an added alias changes the hash", async () => {
    tree.write("elsewhere/shared/word.ts", "export {};\n");
    tree.symlink(tree.path("elsewhere/shared"), "pkg/a");
    const before = await hash();
    tree.symlink(tree.path("elsewhere/shared"), "pkg/b");
    const listing = walkPackageFiles(tree.path("pkg"));
    expect(listing.files.filter((file) => file.endsWith("word.ts"))).toEqual([tree.path("pkg/a/word.ts")]);
    expect(listing.aliases).toEqual([{ path: tree.path("pkg/b"), sameAs: tree.path("pkg/a") }]);
    expect(await hash()).not.toBe(before);
  });

  it(`lists at most ${MAX_PACKAGE_FILES} files and names where it stopped`, async () => {
    for (let index = 0; index < MAX_PACKAGE_FILES + 50; index++) tree.write(`pkg/data/${index}.txt`, "x");
    const listing = walkPackageFiles(tree.path("pkg"));
    expect(listing.files).toHaveLength(MAX_PACKAGE_FILES);
    expect(listing.skipped).toEqual([{ reason: "limit", limit: "files", path: tree.path("pkg/data") }]);
  });
});

describe("hashPackageFiles: what a published package leaves out", () => {
  it("ignores test/ of the package, and of each member of a bundle", async () => {
    tree.write("pkg/test/echo.test.ts", "it('works', () => {});\n");
    const before = await hash();
    tree.write("pkg/test/echo.test.ts", "it('still works', () => {});\n");
    tree.write("pkg/test/fixtures/input.json", "{}");
    expect(await hash()).toBe(before);

    tree.write("bundle/package.json", { name: "tools", skillbox: { kind: "bundle" } });
    tree.write("bundle/one/skill.json", { name: "one" });
    tree.write("bundle/one/test/one.test.ts", "1\n");
    const bundle = () => hashPackageFiles(tree.path("bundle"));
    const bundleBefore = await bundle();
    tree.write("bundle/one/test/one.test.ts", "2\n");
    tree.write("bundle/test/shared.test.ts", "3\n");
    expect(await bundle()).toBe(bundleBefore);
    tree.write("bundle/one/index.ts", "export default () => 1;\n");
    expect(await bundle()).not.toBe(bundleBefore);
  });

  it("ignores what the package.json `files` field leaves out, manifests and package.json always count", async () => {
    tree.write("pkg/package.json", { name: "echo", files: ["index.ts", "lib", "!lib/*.draft.ts"] });
    const before = await hash();
    tree.write("pkg/notes/todo.md", "later\n");
    tree.write("pkg/lib/next.draft.ts", "export {};\n");
    expect(await hash()).toBe(before);
    tree.write("pkg/lib/helper.ts", "export const x = 2;\n");
    const helperEdited = await hash();
    expect(helperEdited).not.toBe(before);
    tree.write("pkg/skill.json", { name: "echo", version: "2.0.0" });
    expect(await hash()).not.toBe(helperEdited);
  });

  it("ignores what .npmignore files leave out, in the package and in its folders", async () => {
    tree.write("pkg/.npmignore", "*.log\n/docs/\n!keep.log\n");
    tree.write("pkg/lib/.npmignore", "scratch.ts\n");
    const before = await hash();
    tree.write("pkg/debug.log", "noise\n");
    tree.write("pkg/docs/guide.md", "# guide\n");
    tree.write("pkg/lib/scratch.ts", "export {};\n");
    expect(await hash()).toBe(before);
    tree.write("pkg/keep.log", "kept\n");
    expect(await hash()).not.toBe(before);
  });
});
