import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

// pnpm's bin shim starts `skillbox` with NODE_PATH pointing at the CLI's hoisted dependencies;
// a skill that imports a package it never declared must fail the same as under plain `node`,
// with the fix, instead of silently getting the CLI's copy.

/** The built command (child processes run dist/: `pnpm exec tsc -b` first). */
const SKILLBOX_BIN = fileURLToPath(new URL("../../../cli/bin/skillbox.mjs", import.meta.url));

let project: TemporaryTree;
let decoy: TemporaryTree;

beforeEach(() => {
  project = createTemporaryTree("skillbox-node-path-project-");
  decoy = createTemporaryTree("skillbox-node-path-");
  decoy.write("zod/package.json", { name: "zod", version: "0.0.0-decoy", main: "index.js" });
  decoy.write("zod/index.js", 'exports.z = { decoy: "the zod on NODE_PATH" };\n');
});

afterEach(() => {
  project.cleanup();
  decoy.cleanup();
});

async function skillbox(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_COLOR: "1",
    NODE_PATH: decoy.root,
    SKILLBOX_DB: project.path("skillbox.db"),
  };
  const child = spawn(process.execPath, [SKILLBOX_BIN, ...args], { cwd: project.root, env, stdio: "pipe" });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  child.stdin.end();
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

describe("skillbox started with NODE_PATH (as pnpm's bin shim starts it)", () => {
  it.each(["inline", "worker"])("never hands a %s handler a package from NODE_PATH", async (runtime) => {
    project.writeFolder("plugins/greet", {
      "package.json": { name: "greet", private: true, type: "module" },
      "skill.json": {
        name: "greet",
        version: "1.0.0",
        runtime,
        input: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        handler: "./index.ts",
      },
      "index.ts":
        'import { z } from "zod";\nexport default (input: { name: string }) => ({ z, name: input.name });\n',
    });
    const result = await skillbox(["run", "greet", "--input", '{"name":"ada"}', "--json"]);
    const printed = result.stdout + result.stderr;
    expect(printed).not.toContain("the zod on NODE_PATH");
    // Paths inside the working directory are shown relative to it, in every runtime.
    expect(printed).toContain(
      "plugins/greet/index.ts imports 'zod', which is not installed for plugins/greet: add `zod` to plugins/greet/package.json dependencies and install it",
    );
    expect(result.code).not.toBe(0);
  });
});
