import { listPackageFolders } from "@skillbox/loader/internal";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { discoverNpmPackages } from "../../src/discovery/discover-package-roots.js";
import { packageRootOf } from "../../src/package-paths.js";

let tree: TemporaryTree;

beforeEach(() => {
  tree = createTemporaryTree();
});

afterEach(() => {
  tree.cleanup();
});

describe("listPackageFolders", () => {
  it("lists `name/` and `@scope/name/` subfolders", async () => {
    tree.mkdir("plugins/echo");
    tree.mkdir("plugins/@acme/weather");
    tree.mkdir("plugins/@acme/news");
    const folders = await listPackageFolders(tree.path("plugins"));
    expect(folders.sort()).toEqual(
      [tree.path("plugins/echo"), tree.path("plugins/@acme/weather"), tree.path("plugins/@acme/news")].sort(),
    );
  });

  it("skips files, dotfolders and node_modules", async () => {
    tree.write("plugins/README.md", "# plugins\n");
    tree.mkdir("plugins/.cache");
    tree.mkdir("plugins/node_modules/dependency");
    tree.mkdir("plugins/echo");
    expect(await listPackageFolders(tree.path("plugins"))).toEqual([tree.path("plugins/echo")]);
  });

  it("skips links to the folder itself or a parent (a loop, not a package)", async () => {
    tree.mkdir("plugins/echo");
    tree.symlink(".", "plugins/all");
    tree.symlink("..", "plugins/up");
    tree.mkdir("plugins/@acme/news");
    tree.symlink("..", "plugins/@acme/back");
    expect((await listPackageFolders(tree.path("plugins"))).sort()).toEqual(
      [tree.path("plugins/@acme/news"), tree.path("plugins/echo")].sort(),
    );
  });

  it("includes symlinked package folders", async () => {
    tree.mkdir("elsewhere/echo");
    tree.symlink(tree.path("elsewhere/echo"), "plugins/echo");
    expect(await listPackageFolders(tree.path("plugins"))).toEqual([tree.path("plugins/echo")]);
  });

  it("returns nothing for a folder that does not exist or is a file", async () => {
    expect(await listPackageFolders(tree.path("missing"))).toEqual([]);
    tree.write("file", "x");
    expect(await listPackageFolders(tree.path("file"))).toEqual([]);
  });
});

describe("discoverNpmPackages", () => {
  it('finds installed packages with a "skillbox" field, scoped or not, and nothing else', async () => {
    tree.write("project/node_modules/skill-echo/package.json", { name: "skill-echo", skillbox: {} });
    tree.write("project/node_modules/@acme/skill-weather/package.json", {
      name: "@acme/skill-weather",
      skillbox: { handler: "./index.js" },
    });
    tree.write("project/node_modules/left-pad/package.json", { name: "left-pad", version: "1.0.0" });
    tree.write("project/node_modules/broken/package.json", "{ not json");
    tree.mkdir("project/node_modules/no-manifest");

    expect(await discoverNpmPackages(tree.path("project"))).toEqual(
      [
        tree.path("project/node_modules/@acme/skill-weather"),
        tree.path("project/node_modules/skill-echo"),
      ].sort(),
    );
  });

  it("reports real paths for packages linked from a store (as pnpm installs them)", async () => {
    tree.write("store/skill-echo@1.0.0/package.json", { name: "skill-echo", skillbox: {} });
    tree.symlink(tree.path("store/skill-echo@1.0.0"), "project/node_modules/skill-echo");
    expect(await discoverNpmPackages(tree.path("project"))).toEqual([tree.path("store/skill-echo@1.0.0")]);
  });

  it("returns nothing without a node_modules folder", async () => {
    tree.mkdir("project");
    expect(await discoverNpmPackages(tree.path("project"))).toEqual([]);
  });
});

describe("packageRootOf", () => {
  it("maps a changed file to its package folder", () => {
    const plugins = tree.path("plugins");
    expect(packageRootOf(plugins, tree.path("plugins/echo/index.ts"))).toBe(tree.path("plugins/echo"));
    expect(packageRootOf(plugins, tree.path("plugins/echo/lib/deep/helper.ts"))).toBe(
      tree.path("plugins/echo"),
    );
    expect(packageRootOf(plugins, tree.path("plugins/echo"))).toBe(tree.path("plugins/echo"));
  });

  it("maps files of `@scope/name` packages to the scoped folder", () => {
    const plugins = tree.path("plugins");
    expect(packageRootOf(plugins, tree.path("plugins/@acme/weather/skill.json"))).toBe(
      tree.path("plugins/@acme/weather"),
    );
    expect(packageRootOf(plugins, tree.path("plugins/@acme"))).toBeUndefined();
  });

  it("maps the watched folder itself to no package", () => {
    expect(packageRootOf(tree.path("plugins"), tree.path("plugins"))).toBeUndefined();
  });
});
