import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PackagePaths } from "../src/package-paths.js";

let tree: TemporaryTree;
let paths: PackagePaths;

beforeEach(() => {
  tree = createTemporaryTree();
  tree.write("plugins/echo/skill.json", { name: "echo" });
  tree.write("plugins/tools/package.json", { name: "tools", skillbox: { kind: "bundle" } });
  tree.write("plugins/tools/one/skill.json", { name: "tools.one" });
  tree.write("plugins/tools/two/skill.json", { name: "tools.two" });
  tree.write("plugins/tools/lib/shared.ts", "export {};\n");
  paths = new PackagePaths([tree.path("plugins"), tree.path("plugins-extra")]);
});

afterEach(() => {
  tree.cleanup();
});

describe("PackagePaths", () => {
  it("names the watched folder and the top-level package folder of a path", () => {
    expect(paths.watchedFolderOf(tree.path("plugins-extra/echo"))).toBe(tree.path("plugins-extra"));
    expect(paths.topFolderOf(tree.path("plugins/tools/one/index.ts"))).toBe(tree.path("plugins/tools"));
    expect(paths.topFolderOf(tree.path("plugins/@acme/weather/skill.json"))).toBe(
      tree.path("plugins/@acme/weather"),
    );
    expect(paths.topFolderOf(tree.path("elsewhere/echo"))).toBeUndefined();
  });

  it("gives a bundle member the bundle as its code root, any other package itself", () => {
    expect(paths.codeRootOf(tree.path("plugins/tools/one"))).toBe(tree.path("plugins/tools"));
    expect(paths.codeRootOf(tree.path("plugins/echo"))).toBe(tree.path("plugins/echo"));
  });

  it("syncs a bundle with its subfolders on disk and the members known before, a package alone", () => {
    const gone = tree.path("plugins/tools/three");
    expect(paths.foldersToSync(tree.path("plugins/tools"), [gone, tree.path("plugins/echo")])).toEqual(
      // `lib` holds no manifest: reading it finds no package.
      [
        "plugins/tools",
        "plugins/tools/lib",
        "plugins/tools/one",
        "plugins/tools/three",
        "plugins/tools/two",
      ].map((folder) => tree.path(folder)),
    );
    expect(paths.foldersToSync(tree.path("plugins/echo"), [tree.path("plugins/echo-two")])).toEqual([
      tree.path("plugins/echo"),
    ]);
  });

  it("tells members of a bundle whose package.json does not parse", () => {
    expect(paths.isInUnreadableBundle(tree.path("plugins/tools/one"))).toBe(false);
    tree.write("plugins/tools/package.json", '{ "skillbox": { "kind": "bund');
    expect(paths.isInUnreadableBundle(tree.path("plugins/tools/one"))).toBe(true);
    // The bundle folder itself is read (and reports why); only its members wait.
    expect(paths.isInUnreadableBundle(tree.path("plugins/tools"))).toBe(false);
  });
});
