import { pathToFileURL } from "node:url";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

// Issue 14: in npm's flat layout the project's node_modules holds the CLI's own dependencies, so a
// worker skill importing a package it never declared ran in that project and failed in the next.

let tree: TemporaryTree;
let host: TemporaryHost;

beforeEach(() => {
  tree = createTemporaryTree("skillbox-worker-hoisted-");
  host = createTemporaryHost({ worker: { maxThreads: 1 } });
  // A dependency "hoisted" into the project's node_modules, as npm does for the CLI's zod.
  tree.writeFolder("project/node_modules/hoisted-dep", {
    "package.json": { name: "hoisted-dep", version: "1.0.0", type: "module", exports: "./index.js" },
    "index.js": 'export const word = "from the project";\n',
  });
});

afterEach(async () => {
  await host.dispose();
  tree.cleanup();
});

function registerWorkerSkill(skillManifest: Record<string, unknown>): string {
  tree.write("project/package.json", { name: "project", private: true, dependencies: { skillbox: "*" } });
  tree.write("project/skills/hello/package.json", skillManifest);
  const file = tree.write(
    "project/skills/hello/index.ts",
    'import { word } from "hoisted-dep";\nexport default () => ({ word });\n',
  );
  host.registry.register({
    name: "hello",
    version: "1.0.0",
    apiKeyId: "public",
    input: { type: "object" },
    handler: pathToFileURL(file).href,
    runtime: "worker",
  });
  return file;
}

describe("worker threads and packages hoisted above a skill", () => {
  it("refuse one that neither the skill's nor the project's package.json declares, naming the fix", async () => {
    registerWorkerSkill({ name: "hello", private: true, type: "module" });
    const result = await host.executor.execute("hello", {});
    expect(result.status).toBe("error");
    expect(result.error?.code).toBe("HANDLER_INVALID");
    expect(result.error?.message).toContain("imports 'hoisted-dep', which is not installed for");
    expect(result.error?.message).toContain("add `hoisted-dep` to");
  });

  it("load one the skill declares", async () => {
    registerWorkerSkill({ name: "hello", type: "module", dependencies: { "hoisted-dep": "^1.0.0" } });
    const result = await host.executor.execute("hello", {});
    expect(result.output).toEqual({ word: "from the project" });
  });
});
