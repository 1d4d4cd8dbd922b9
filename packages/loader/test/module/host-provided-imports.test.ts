import Module from "node:module";
import * as hostCore from "@skillbox/core";
import * as hostCoreHandler from "@skillbox/core/handler";
import { type LoadSkillsResult, loadSkills } from "@skillbox/loader";
import { importFresh } from "@skillbox/loader/internal";
import { peerPackageJson } from "@skillbox/test-helpers/host-provided-skill";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

// Skill packages here live in a folder under the OS temp dir with no node_modules of their own
// above them (none has `@skillbox/core` or zod installed): the situation of a skill in a user's
// project, outside this repository.

beforeAll(() => {
  // `pnpm exec vitest` starts through pnpm's bin shim, which sets NODE_PATH to the workspace's
  // hoisted packages (zod among them). The skillbox command drops it (bin/skillbox.mjs) before it
  // loads anything; so does this test process, to see what that command's inline handlers see.
  delete process.env.NODE_PATH;
  (Module as unknown as { _initPaths(): void })._initPaths();
});

let tree: TemporaryTree;
let host: TemporaryHost;
const results: LoadSkillsResult[] = [];

beforeEach(() => {
  tree = createTemporaryTree("skillbox-host-imports-");
  host = createTemporaryHost();
});

afterEach(async () => {
  for (const result of results.splice(0)) result.loader.close();
  await host.dispose();
  tree.cleanup();
});

async function load(): Promise<LoadSkillsResult> {
  const result = await loadSkills({
    dirs: [tree.path("skills")],
    npm: false,
    registry: host.registry,
    executor: host.executor,
  });
  results.push(result);
  return result;
}

const MANIFEST = {
  name: "hello",
  version: "1.0.0",
  input: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  handler: "./index.ts",
};

/** A package.json declaring `@skillbox/core` as a peer dependency only, as skill packages do. */
const PACKAGE_JSON = peerPackageJson("hello-skill");

describe("the host's @skillbox/core in inline handlers", () => {
  it("gives a handler outside any workspace @skillbox/core and @skillbox/core/handler, and runs it", async () => {
    tree.writeFolder("skills/hello", {
      "package.json": PACKAGE_JSON,
      "skill.json": MANIFEST,
      "index.ts": [
        'import { defineSkill } from "@skillbox/core";',
        'import { SkillboxError } from "@skillbox/core/handler";',
        "export default defineSkill({",
        "  handler: (input: { name: string }) => {",
        '    if (input.name === "") throw new SkillboxError("DENIED", "no name");',
        "    return { greeting: 'hello ' + input.name };",
        "  },",
        "});",
        "",
      ].join("\n"),
    });
    const report = await load();
    expect(report.failed).toEqual([]);
    const execution = await host.executor.execute("hello", { name: "ada" });
    expect(execution.output).toEqual({ greeting: "hello ada" });
  });

  it("hands the module the host's own instances (one SkillboxError class, one deny)", async () => {
    const path = tree.write(
      "pkg/index.ts",
      [
        'import * as core from "@skillbox/core";',
        'import * as handler from "@skillbox/core/handler";',
        "export default { core, handler };",
        "",
      ].join("\n"),
    );
    const exported = (await importFresh(path)) as {
      core: typeof hostCore;
      handler: typeof hostCoreHandler;
    };
    expect(exported.core.SkillboxError).toBe(hostCore.SkillboxError);
    expect(exported.core.isDefinedSkill).toBe(hostCore.isDefinedSkill);
    expect(exported.core.defineInterceptor).toBe(hostCore.defineInterceptor);
    expect(exported.handler.deny).toBe(hostCoreHandler.deny);
    expect(exported.handler.SkillboxError).toBe(hostCore.SkillboxError);
    expect(exported.core.deny("no") instanceof hostCore.SkillboxError).toBe(true);
  });

  it("gives an interceptor plugin the host's defineInterceptor and deny, so its refusal is a denial", async () => {
    tree.writeFolder("skills/hello", {
      "package.json": PACKAGE_JSON,
      "skill.json": MANIFEST,
      "index.ts": "export default () => ({ ran: true });\n",
    });
    tree.writeFolder("skills/guard", {
      "package.json": { ...PACKAGE_JSON, name: "guard-interceptor" },
      "interceptor.json": { name: "guard", handler: "./index.ts" },
      "index.ts": [
        'import { defineInterceptor } from "@skillbox/core";',
        'import { deny } from "@skillbox/core/handler";',
        "export default defineInterceptor({",
        '  name: "guard",',
        "  before() {",
        '    throw deny("not today");',
        "  },",
        "});",
        "",
      ].join("\n"),
    });
    const report = await load();
    expect(report.failed).toEqual([]);
    const execution = await host.executor.execute("hello", { name: "ada" });
    expect(execution).toMatchObject({ status: "denied", error: { code: "DENIED", message: "not today" } });
  });

  it("resolves any other package from the skill's own node_modules", async () => {
    tree.writeFolder("skills/hello", {
      "package.json": { ...PACKAGE_JSON, dependencies: { "fake-dep": "1.0.0" } },
      "skill.json": MANIFEST,
      "index.ts":
        'import { shout } from "fake-dep";\nexport default (input: { name: string }) => shout(input.name);\n',
      "node_modules/fake-dep/package.json": { name: "fake-dep", version: "1.0.0", main: "index.js" },
      "node_modules/fake-dep/index.js": "exports.shout = (text) => ({ shouted: text.toUpperCase() });\n",
    });
    const report = await load();
    expect(report.failed).toEqual([]);
    expect((await host.executor.execute("hello", { name: "ada" })).output).toEqual({ shouted: "ADA" });
  });
});

describe("a package a handler imports that is not installed", () => {
  /** Loads the tree's skills (an inline handler is imported on first use), runs `hello` and returns its error. */
  async function loadFailure(): Promise<{ code: string; message: string }> {
    expect((await load()).failed).toEqual([]);
    const execution = await host.executor.execute("hello", { name: "ada" });
    expect(execution.status).toBe("error");
    return execution.error as { code: string; message: string };
  }

  it("fails to load with HANDLER_INVALID naming the file, the package folder and the fix", async () => {
    tree.writeFolder("skills/hello", {
      "package.json": PACKAGE_JSON,
      "skill.json": MANIFEST,
      "index.ts": 'import { z } from "zod";\nexport default (input: unknown) => z.object({}).parse(input);\n',
    });
    const error = await loadFailure();
    expect(error.code).toBe("HANDLER_INVALID");
    expect(error.message).toBe(
      `${tree.path("skills/hello/index.ts")} imports 'zod', which is not installed for ${tree.path("skills/hello")}: add \`zod\` to ${tree.path("skills/hello/package.json")} dependencies and install it`,
    );
  });

  it("names the helper file that imports it, and the package of a scoped subpath", async () => {
    tree.writeFolder("skills/hello", {
      "package.json": PACKAGE_JSON,
      "skill.json": MANIFEST,
      "index.ts": 'import { helper } from "./lib/helper.ts";\nexport default () => helper();\n',
      "lib/helper.ts": 'import { thing } from "@acme/toolkit/strings";\nexport const helper = () => thing;\n',
    });
    expect((await loadFailure()).message).toBe(
      `${tree.path("skills/hello/lib/helper.ts")} imports '@acme/toolkit/strings', which is not installed for ${tree.path("skills/hello")}: add \`@acme/toolkit\` to ${tree.path("skills/hello/package.json")} dependencies and install it`,
    );
  });

  it("says to create a package.json when the skill has none", async () => {
    tree.writeFolder("skills/hello", {
      "skill.json": MANIFEST,
      "index.ts": 'import { z } from "zod/v4";\nexport default () => z;\n',
    });
    expect((await loadFailure()).message).toBe(
      `${tree.path("skills/hello/index.ts")} imports 'zod/v4', which is not installed for ${tree.path("skills/hello")}: create ${tree.path("skills/hello/package.json")} with \`zod\` in its dependencies, and install them`,
    );
  });

  it("says to install when the package.json declares it", async () => {
    tree.writeFolder("skills/hello", {
      "package.json": { ...PACKAGE_JSON, dependencies: { zod: "^4.0.0" } },
      "skill.json": { ...MANIFEST, runtime: "inline" },
      "index.ts": 'import { z } from "zod";\nexport default () => z;\n',
    });
    expect((await loadFailure()).message).toBe(
      `${tree.path("skills/hello/index.ts")} imports 'zod', which ${tree.path("skills/hello/package.json")} declares but is not installed there: install the dependencies of ${tree.path("skills/hello")} (npm install)`,
    );
  });
});
