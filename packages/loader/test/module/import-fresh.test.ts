import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { isSkillboxError, type SkillboxError } from "@skillbox/core";
import { importFresh } from "@skillbox/loader/internal";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { jitiInternals } from "../../src/module/jiti-internals.js";

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

  // jiti imports `.mjs`, `.cjs` and `.js` of a `"type": "module"` package natively, and Node
  // caches those forever: without care an edit to any of them never reached a running host.
  it.each([
    ["an .mjs module and its .mjs helper", {}, "index.mjs", "helper.mjs", "esm"],
    ["a .cjs module and its .cjs helper", {}, "index.cjs", "helper.cjs", "cjs"],
    [
      'a .js module and its .js helper in a "type": "module" package',
      { "package.json": '{ "type": "module" }\n' },
      "index.js",
      "helper.js",
      "esm",
    ],
    ["a .ts module and its .mjs helper", {}, "index.ts", "helper.mjs", "esm"],
  ] as const)("evaluates %s again after an edit", async (_kind, extra, entry, helper, format) => {
    for (const [file, content] of Object.entries(extra)) tree.write(`pkg/${file}`, content);
    const write = (version: string) => {
      tree.write(
        `pkg/${helper}`,
        format === "esm" ? `export const word = "${version}";\n` : `exports.word = "${version}";\n`,
      );
      return tree.write(
        `pkg/${entry}`,
        format === "esm"
          ? `import { word } from "./${helper}";\nexport default () => "entry-${version} " + word;\n`
          : `const { word } = require("./${helper}");\nmodule.exports = () => "entry-${version} " + word;\n`,
      );
    };
    const path = write("one");
    expect((await importHandler(path))({ msg: "" })).toBe("entry-one one");
    write("two");
    expect((await importHandler(path))({ msg: "" })).toBe("entry-two two");
  });

  it("evaluates an .mjs module with top-level await and import.meta.url as Node would", async () => {
    const path = tree.write(
      "pkg/index.mjs",
      'const word = await Promise.resolve("awaited");\nconst url = import.meta.url;\nexport default () => word + " " + url;\n',
    );
    expect((await importHandler(path))({ msg: "" })).toBe(`awaited ${pathToFileURL(path).href}`);
  });

  it("evaluates an edited JSON file the handler imports", async () => {
    tree.write("pkg/data.json", { word: "one" });
    const path = tree.write(
      "pkg/index.cjs",
      'const data = require("./data.json");\nmodule.exports = () => data.word;\n',
    );
    expect((await importHandler(path))({ msg: "" })).toBe("one");
    tree.write("pkg/data.json", { word: "two" });
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

describe("jitiInternals", () => {
  it("fails with HANDLER_INVALID naming the jiti version installed and the one needed when jiti's internal files are missing", () => {
    const folder = tree.path("node_modules/jiti");
    tree.write("node_modules/jiti/package.json", JSON.stringify({ name: "jiti", version: "9.0.0" }));
    const { dependencies } = JSON.parse(
      readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
    ) as { dependencies: { jiti: string } };

    let thrown: unknown;
    try {
      jitiInternals(folder);
    } catch (error) {
      thrown = error;
    }

    expect(isSkillboxError(thrown)).toBe(true);
    const error = thrown as SkillboxError;
    expect(error.code).toBe("HANDLER_INVALID");
    expect(error.message).toContain(join("dist", "jiti.cjs"));
    expect(error.message).toContain("jiti 9.0.0 there");
    expect(error.message).toContain(`it needs jiti ${dependencies.jiti}`);
  });

  it("loads jiti's Babel transform only when a file needs transpiling, with the same clear error", () => {
    tree.write("node_modules/jiti/package.json", JSON.stringify({ name: "jiti", version: "9.0.0" }));
    tree.write("node_modules/jiti/dist/jiti.cjs", "module.exports = () => ({});\n");

    const internals = jitiInternals(tree.path("node_modules/jiti"));

    expect(typeof internals.createJitiWithHooks).toBe("function");
    expect(() => internals.transform({ source: "", filename: "x.ts" } as never)).toThrow(
      /cannot load jiti's internal dist.babel\.cjs .*it needs jiti/,
    );
  });
});
