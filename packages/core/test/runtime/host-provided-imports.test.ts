import { pathToFileURL } from "node:url";
import { packageNameOf } from "@skillbox/core/handler-module";
import { CORE_IMPORTING_HANDLER, peerPackageJson } from "@skillbox/test-helpers/host-provided-skill";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

// Handler modules here live under the OS temp dir, outside the workspace, with no node_modules
// above them that holds `@skillbox/core` or zod: a skill in a user's own project.

/** A folder on NODE_PATH holding a package named zod, which no handler may get. */
let decoy: TemporaryTree;
let savedNodePath: string | undefined;

beforeAll(() => {
  decoy = createTemporaryTree("skillbox-node-path-");
  decoy.write("zod/package.json", { name: "zod", version: "0.0.0-decoy", main: "index.js" });
  decoy.write("zod/index.js", 'exports.z = "the decoy on NODE_PATH";\n');
  // Worker threads take the host's environment: as pnpm's bin shims do, this puts a folder of
  // packages the skill never declared on NODE_PATH.
  savedNodePath = process.env.NODE_PATH;
  process.env.NODE_PATH = decoy.root;
});

afterAll(() => {
  if (savedNodePath === undefined) delete process.env.NODE_PATH;
  else process.env.NODE_PATH = savedNodePath;
  decoy.cleanup();
});

let tree: TemporaryTree;
let host: TemporaryHost;

beforeEach(() => {
  tree = createTemporaryTree("skillbox-worker-imports-");
  host = createTemporaryHost({ worker: { maxThreads: 1 } });
});

afterEach(async () => {
  await host.dispose();
  tree.cleanup();
});

const PACKAGE_JSON = peerPackageJson("hello-skill");

function registerWorker(file: string): void {
  host.registry.register({
    name: "hello",
    version: "1.0.0",
    apiKeyId: "public",
    input: { type: "object" },
    handler: pathToFileURL(file).href,
    runtime: "worker",
  });
}

async function run(): Promise<{
  status: string;
  output?: unknown;
  error?: { code: string; message: string };
}> {
  return (await host.executor.execute("hello", { name: "ada" })) as never;
}

describe("worker threads give handlers the host's @skillbox/core", () => {
  it("runs a handler that imports @skillbox/core and @skillbox/core/handler from a folder without them", async () => {
    tree.write("skill/package.json", PACKAGE_JSON);
    const file = tree.write("skill/index.ts", CORE_IMPORTING_HANDLER);
    registerWorker(file);
    const execution = await run();
    expect(execution).toMatchObject({ status: "success", output: { greeting: "hello ada", denies: true } });
  });

  it("resolves other packages from the skill's own node_modules", async () => {
    tree.write("skill/package.json", { ...PACKAGE_JSON, dependencies: { "fake-dep": "1.0.0" } });
    tree.write("skill/node_modules/fake-dep/package.json", {
      name: "fake-dep",
      version: "1.0.0",
      main: "index.js",
    });
    tree.write("skill/node_modules/fake-dep/index.js", "exports.shout = (text) => text.toUpperCase();\n");
    const file = tree.write(
      "skill/index.ts",
      'import { shout } from "fake-dep";\nexport default (input: { name: string }) => ({ shouted: shout(input.name) });\n',
    );
    registerWorker(file);
    expect((await run()).output).toEqual({ shouted: "ADA" });
  });
});

describe("a package a worker handler imports that is not installed", () => {
  it("fails with HANDLER_INVALID naming the file, the package folder and the fix, never taking NODE_PATH's copy", async () => {
    tree.write("skill/package.json", PACKAGE_JSON);
    const file = tree.write("skill/index.ts", 'import { z } from "zod";\nexport default () => ({ z });\n');
    registerWorker(file);
    const execution = await run();
    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe("HANDLER_INVALID");
    expect(execution.error?.message).toBe(
      `${file} imports 'zod', which is not installed for ${tree.path("skill")}: add \`zod\` to ${tree.path("skill/package.json")} dependencies and install it`,
    );
  });

  it("names the package's own files, not the loader's snapshot the worker loads", async () => {
    const snapshot = "skill/node_modules/.skillbox-snapshots/0123abcd";
    tree.write(`${snapshot}/package.json`, PACKAGE_JSON);
    tree.write(`${snapshot}/lib/helper.ts`, 'export { thing } from "@acme/toolkit/strings";\n');
    const file = tree.write(
      `${snapshot}/index.ts`,
      'import { thing } from "./lib/helper.ts";\nexport default () => thing;\n',
    );
    registerWorker(file);
    const execution = await run();
    expect(execution.error?.message).toBe(
      `${tree.path("skill/lib/helper.ts")} imports '@acme/toolkit/strings', which is not installed for ${tree.path("skill")}: add \`@acme/toolkit\` to ${tree.path("skill/package.json")} dependencies and install it`,
    );
  });

  it("says to create a package.json when the skill has none", async () => {
    const file = tree.write(
      "skill/index.mjs",
      'import { z } from "zod/v4";\nexport default () => ({ z });\n',
    );
    registerWorker(file);
    expect((await run()).error?.message).toBe(
      `${file} imports 'zod/v4', which is not installed for ${tree.path("skill")}: create ${tree.path("skill/package.json")} with \`zod\` in its dependencies, and install them`,
    );
  });
});

describe("packageNameOf", () => {
  it.each([
    ["zod", "zod"],
    ["zod/v4", "zod"],
    ["@scope/pkg", "@scope/pkg"],
    ["@scope/pkg/sub/path", "@scope/pkg"],
    ["lodash.get", "lodash.get"],
  ])("names the package of %s", (specifier, name) => {
    expect(packageNameOf(specifier)).toBe(name);
  });

  it.each([
    "node:fs",
    "fs",
    "fs/promises",
    "node:nope",
    "./helper.ts",
    "../up",
    "/abs/file.js",
    "#internal",
    "file:///x.js",
    "@scope",
  ])("names no package for %s", (specifier) => {
    expect(packageNameOf(specifier)).toBeUndefined();
  });
});
