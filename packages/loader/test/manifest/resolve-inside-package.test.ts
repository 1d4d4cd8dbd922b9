import { isSkillboxError, type SkillboxError } from "@skillbox/core";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveInsidePackage } from "../../src/manifest/resolve-inside-package.js";

let tree: TemporaryTree;

beforeEach(() => {
  tree = createTemporaryTree();
  tree.write("pkg/index.ts", "export default () => 1;\n");
  tree.write("pkg/lib/deep/handler.ts", "export default () => 1;\n");
  tree.write("outside.ts", "export default () => 1;\n");
});

afterEach(() => {
  tree.cleanup();
});

const resolveHandler = (path: string) =>
  resolveInsidePackage(tree.path("pkg"), path, "pkg/skill.json", "handler");

function refusal(path: string): SkillboxError {
  try {
    resolveHandler(path);
  } catch (error) {
    expect(isSkillboxError(error)).toBe(true);
    return error as SkillboxError;
  }
  return expect.unreachable(`${path} was accepted`);
}

describe("resolveInsidePackage", () => {
  it("resolves relative paths inside the package to real paths", () => {
    expect(resolveHandler("./index.ts")).toBe(tree.path("pkg/index.ts"));
    expect(resolveHandler("index.ts")).toBe(tree.path("pkg/index.ts"));
    expect(resolveHandler("./lib/deep/handler.ts")).toBe(tree.path("pkg/lib/deep/handler.ts"));
  });

  it.each([
    ["a parent path", "../outside.ts"],
    ["a parent path in the middle", "./lib/../../outside.ts"],
    ["a backslash parent path", "..\\outside.ts"],
    ["an absolute path", "/etc/passwd"],
    ["a Windows drive path", "C:\\Windows\\system32\\cmd.exe"],
    ["a missing file", "./missing.ts"],
    ["the package folder itself", "."],
  ])("refuses %s with MANIFEST_INVALID naming the file and the field", (_case, path) => {
    const error = refusal(path);
    expect(error.code).toBe("MANIFEST_INVALID");
    expect(error.message).toMatch(/^pkg\/skill\.json: `handler` /);
    expect(error.message).toContain(JSON.stringify(path));
    expect(error.data).toEqual({ file: "pkg/skill.json", field: "handler" });
  });

  it("refuses a symlinked file or folder that leads outside", () => {
    tree.symlink(tree.path("outside.ts"), "pkg/link.ts");
    tree.symlink(tree.path(), "pkg/up");
    expect(refusal("./link.ts").message).toContain("symlink");
    expect(refusal("./up/outside.ts").code).toBe("MANIFEST_INVALID");
  });

  it("accepts a symlink that stays inside", () => {
    tree.symlink("./lib/deep/handler.ts", "pkg/entry.ts");
    expect(resolveHandler("./entry.ts")).toBe(tree.path("pkg/lib/deep/handler.ts"));
  });
});
