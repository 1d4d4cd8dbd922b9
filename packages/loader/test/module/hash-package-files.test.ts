import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTemporaryTree, type TemporaryTree } from "../../../../test/helpers/temporary-tree.js";
import { hashPackageFiles } from "../../src/module/hash-package-files.js";

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
});
