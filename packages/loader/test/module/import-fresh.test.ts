import { importFresh } from "@skillbox/loader";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTemporaryTree, type TemporaryTree } from "../../../../test/helpers/temporary-tree.js";

let tree: TemporaryTree;

beforeEach(() => {
  tree = createTemporaryTree();
});

afterEach(() => {
  tree.cleanup();
});

type Handler = (input: { msg: string }) => unknown;

async function importHandler(path: string): Promise<Handler> {
  const exported = await importFresh(path);
  expect(typeof exported).toBe("function");
  return exported as Handler;
}

describe("importFresh", () => {
  it.each([
    ["TypeScript ESM", "index.ts", "export default (input: { msg: string }): string => 'ts:' + input.msg;\n"],
    [
      "TypeScript with types only it can erase",
      "index.mts",
      "type In = { msg: string };\nexport default function (input: In) { return 'mts:' + input.msg; }\n",
    ],
    ["JavaScript ESM (.mjs)", "index.mjs", "export default (input) => 'mjs:' + input.msg;\n"],
    ["JavaScript ESM (.js)", "index.js", "export default (input) => 'js:' + input.msg;\n"],
    ["CommonJS module.exports (.cjs)", "index.cjs", "module.exports = (input) => 'cjs:' + input.msg;\n"],
    [
      "CommonJS compiled by tsc (exports.default + __esModule)",
      "index.js",
      "Object.defineProperty(exports, '__esModule', { value: true });\nexports.default = (input) => 'tsc:' + input.msg;\n",
    ],
    [
      "CommonJS from TypeScript (.cts)",
      "index.cts",
      "module.exports = (input: { msg: string }) => 'cts:' + input.msg;\n",
    ],
  ])("imports a %s handler module", async (_kind, file, source) => {
    const path = tree.write(`pkg/${file}`, source);
    const handler = await importHandler(path);
    expect(handler({ msg: "x" })).toMatch(/^[a-z-]+:x$/);
  });

  it("imports CommonJS that requires a sibling CommonJS helper", async () => {
    tree.write("pkg/helper.cjs", "exports.shout = (text) => text.toUpperCase();\n");
    const path = tree.write(
      "pkg/index.cjs",
      'const { shout } = require("./helper.cjs");\nmodule.exports = (input) => shout(input.msg);\n',
    );
    expect((await importHandler(path))({ msg: "hey" })).toBe("HEY");
  });

  it("returns the module namespace when there is no default export", async () => {
    const path = tree.write("pkg/index.ts", "export const answer = 42;\n");
    expect(await importFresh(path)).toMatchObject({ answer: 42 });
  });

  it("evaluates the module again after an edit", async () => {
    const path = tree.write("pkg/index.ts", 'export default () => "one";\n');
    expect((await importHandler(path))({ msg: "" })).toBe("one");
    tree.write("pkg/index.ts", 'export default () => "two";\n');
    expect((await importHandler(path))({ msg: "" })).toBe("two");
  });

  it("evaluates edited helper modules the handler imports", async () => {
    tree.write("pkg/lib/word.ts", 'export const word = "one";\n');
    const path = tree.write(
      "pkg/index.ts",
      'import { word } from "./lib/word.ts";\nexport default () => word;\n',
    );
    expect((await importHandler(path))({ msg: "" })).toBe("one");
    tree.write("pkg/lib/word.ts", 'export const word = "two";\n');
    expect((await importHandler(path))({ msg: "" })).toBe("two");
  });

  it("evaluates edited helpers imported without an extension", async () => {
    tree.write("pkg/word.ts", 'export const word = "one";\n');
    const path = tree.write("pkg/index.ts", 'import { word } from "./word";\nexport default () => word;\n');
    expect((await importHandler(path))({ msg: "" })).toBe("one");
    tree.write("pkg/word.ts", 'export const word = "two";\n');
    expect((await importHandler(path))({ msg: "" })).toBe("two");
  });

  it("gives each import its own module state", async () => {
    const path = tree.write("pkg/index.ts", "let calls = 0;\nexport default () => ++calls;\n");
    const first = await importHandler(path);
    expect(first({ msg: "" })).toBe(1);
    expect(first({ msg: "" })).toBe(2);
    const second = await importHandler(path);
    expect(second({ msg: "" })).toBe(1);
  });

  it("rejects a module with a syntax error", async () => {
    const path = tree.write("pkg/index.ts", "export default (input => {\n");
    await expect(importFresh(path)).rejects.toThrow();
  });

  it("rejects a module that throws while it is evaluated", async () => {
    const path = tree.write("pkg/index.ts", 'throw new Error("boom at import");\nexport default () => 1;\n');
    await expect(importFresh(path)).rejects.toThrow(/boom at import/);
  });
});
