import Module from "node:module";
import { displayPath, importFresh } from "@skillbox/loader/internal";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

// Issue 14: in npm's flat layout the project's node_modules holds the CLI's own dependencies, so
// a skill importing a `zod` it never declared ran there — and failed in pnpm's strict layout or a
// container. A package found above the skill counts only when a package.json on the way declares it.

beforeAll(() => {
  // pnpm's bin shim sets NODE_PATH for this test process; the skillbox command drops it.
  delete process.env.NODE_PATH;
  (Module as unknown as { _initPaths(): void })._initPaths();
});

let tree: TemporaryTree;

beforeEach(() => {
  tree = createTemporaryTree("skillbox-hoisted-imports-");
  // A dependency "hoisted" into the project's node_modules, as npm does for the CLI's zod.
  tree.writeFolder("project/node_modules/hoisted-dep", {
    "package.json": { name: "hoisted-dep", version: "1.0.0", type: "module", exports: "./index.js" },
    "index.js": 'export const word = "from the project";\n',
  });
  tree.write(
    "project/skills/hello/index.ts",
    'import { word } from "hoisted-dep";\nexport default () => word;\n',
  );
});

afterEach(() => tree.cleanup());

const handlerFile = () => tree.path("project/skills/hello/index.ts");
const importHello = () => importFresh(handlerFile(), { root: tree.path("project/skills/hello") });

describe("packages hoisted above a skill", () => {
  it("refuses one that neither the skill's nor the project's package.json declares, with the fix", async () => {
    tree.write("project/package.json", { name: "project", private: true, dependencies: { skillbox: "*" } });
    tree.write("project/skills/hello/package.json", { name: "hello", private: true, type: "module" });
    await expect(importHello()).rejects.toMatchObject({
      code: "ERR_MODULE_NOT_FOUND",
      message: `Cannot find package 'hoisted-dep' imported from ${handlerFile()}`,
    });
  });

  it("names the fix through the loader's message: add it to the skill's package.json", async () => {
    tree.write("project/package.json", { name: "project", private: true });
    tree.write("project/skills/hello/package.json", { name: "hello", private: true, type: "module" });
    const { importSkillModule } = await import("@skillbox/loader/internal");
    await expect(
      importSkillModule(handlerFile(), { root: tree.path("project/skills/hello") }),
    ).rejects.toMatchObject({
      code: "HANDLER_INVALID",
      message: expect.stringContaining(
        `which is not installed for ${displayPath(tree.path("project/skills/hello"))}: add \`hoisted-dep\` to`,
      ),
    });
  });

  it("loads one the skill declares", async () => {
    tree.write("project/package.json", { name: "project", private: true });
    tree.write("project/skills/hello/package.json", {
      name: "hello",
      type: "module",
      dependencies: { "hoisted-dep": "^1.0.0" },
    });
    const handler = (await importHello()) as () => string;
    expect(handler()).toBe("from the project");
  });

  it("loads one the project declares, for the skills it holds", async () => {
    tree.write("project/package.json", {
      name: "project",
      private: true,
      dependencies: { "hoisted-dep": "^1.0.0" },
    });
    tree.write("project/skills/hello/package.json", { name: "hello", private: true, type: "module" });
    const handler = (await importHello()) as () => string;
    expect(handler()).toBe("from the project");
  });

  it("leaves a node_modules that no package.json owns as it is", async () => {
    const handler = (await importHello()) as () => string;
    expect(handler()).toBe("from the project");
  });
});
