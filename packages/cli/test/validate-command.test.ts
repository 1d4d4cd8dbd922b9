import { existsSync } from "node:fs";
import { type CliProject, createCliProject } from "@skillbox/test-helpers/cli-process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { echoFolder, skillFolder } from "./cli-fixtures.js";

let project: CliProject;

beforeEach(() => {
  project = createCliProject();
});

afterEach(async () => {
  await project.cleanup();
});

describe("skillbox validate", { timeout: 60_000 }, () => {
  it("exits 0 when every manifest and handler is good", async () => {
    project.tree.writeFolder("plugins/echo", echoFolder());
    const result = await project.run(["validate"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/✓ skill echo@1\.0\.0\s+plugins\/echo/);
    expect(result.stdout).toContain("1 package(s) checked: 1 ok, 0 with problems");
    const json = JSON.parse((await project.run(["validate", "plugins", "--json"])).stdout);
    expect(json).toEqual({
      ok: true,
      problems: [],
      packages: [
        { root: project.tree.path("plugins/echo"), kind: "skill", name: "echo", version: "1.0.0", ok: true },
      ],
    });
  });

  it("exits 1 and names the file and the field of a broken manifest", async () => {
    project.tree.writeFolder("plugins/echo", echoFolder());
    project.tree.writeFolder("plugins/broken", {
      "skill.json": { name: "broken", version: "1.0", handler: "./index.ts", timeout: 5 },
      "index.ts": "export default () => ({});\n",
    });
    const result = await project.run(["validate"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'MANIFEST_INVALID: plugins/broken/skill.json: `version` must be a semver version such as "1.0.0", got "1.0"',
    );
    expect(result.stdout).toContain("unknown field `timeout`");
    expect(result.stdout).toContain("2 package(s) checked: 1 ok, 1 with problems");

    const json = await project.run(["validate", "--json"]);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout);
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([
      expect.objectContaining({
        file: "plugins/broken/skill.json",
        code: "MANIFEST_INVALID",
        field: "version",
      }),
      expect.objectContaining({
        file: "plugins/broken/skill.json",
        code: "MANIFEST_INVALID",
        field: "timeout",
      }),
    ]);
  });

  it("reports handler syntax errors, missing handlers, bad exports and duplicates", async () => {
    project.tree.writeFolder("plugins/syntax", skillFolder({ name: "syntax" }, "return {"));
    project.tree.writeFolder("plugins/missing", {
      "skill.json": { name: "missing", version: "1.0.0", handler: "./gone.ts" },
    });
    project.tree.writeFolder("plugins/not-a-function", {
      "skill.json": { name: "not-a-function", version: "1.0.0", handler: "./index.ts" },
      "index.ts": "export default 42;\n",
    });
    project.tree.writeFolder("plugins/a-echo", echoFolder());
    project.tree.writeFolder("plugins/b-echo", echoFolder());
    const result = await project.run(["validate", "--json"]);
    expect(result.code).toBe(1);
    const problems = JSON.parse(result.stdout).problems as { file: string; code: string; message: string }[];
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: "HANDLER_INVALID", file: "plugins/syntax/index.ts" }),
        expect.objectContaining({ code: "MANIFEST_INVALID", file: "plugins/missing/skill.json" }),
        expect.objectContaining({ code: "HANDLER_INVALID", file: "plugins/not-a-function/index.ts" }),
        expect.objectContaining({ code: "MANIFEST_INVALID", file: "plugins/b-echo/skill.json" }),
      ]),
    );
    expect(problems.find((problem) => problem.file === "plugins/syntax/index.ts")?.message).toMatch(
      /^plugins\/syntax\/index\.ts:\d+:\d+: syntax error/,
    );
    expect(problems.find((problem) => problem.file === "plugins/b-echo/skill.json")?.message).toContain(
      "echo@1.0.0 is already provided by plugins/a-echo",
    );
  });

  it("loads interceptor plugins as the host does: a missing import or options the factory refuses fail", async () => {
    const policy = (name: string, options: Record<string, unknown>, module: string) => ({
      "interceptor.json": { name, handler: "./index.ts", options },
      "index.ts": module,
    });
    const factory = [
      "export default (options: { default?: string }) => {",
      '  if (options.default !== "allow" && options.default !== "deny")',
      '    throw new Error("default must be allow or deny, got " + JSON.stringify(options.default));',
      '  return { name: "policy", before() {} };',
      "};",
      "",
    ].join("\n");
    project.tree.writeFolder("plugins/bad-options", policy("policy-a", { default: "nope" }, factory));
    project.tree.writeFolder(
      "plugins/missing-import",
      policy("policy-b", { default: "deny" }, `import "./rules.js";\n${factory}`),
    );
    project.tree.writeFolder("plugins/good", policy("good-policy", { default: "deny" }, factory));

    const result = await project.run(["validate", "--json"]);

    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as {
      packages: { name: string; ok: boolean }[];
      problems: { file: string; code: string; message: string }[];
    };
    expect(report.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          code: "HANDLER_INVALID",
          file: "plugins/bad-options/interceptor.json",
          message: expect.stringContaining('got "nope"'),
        }),
        expect.objectContaining({
          code: "HANDLER_INVALID",
          file: "plugins/missing-import/index.ts",
          message: expect.stringContaining("Cannot find module './rules.js'"),
        }),
      ]),
    );
    expect(new Set(report.problems.map((problem) => problem.file))).toEqual(
      new Set(["plugins/bad-options/interceptor.json", "plugins/missing-import/index.ts"]),
    );
    expect(report.packages.find((entry) => entry.name === "good-policy")?.ok).toBe(true);
    const printed = await project.run(["validate"]);
    expect(printed.code).toBe(1);
    expect(printed.stdout).toContain("plugins/bad-options/index.ts: the interceptor factory threw");
  });

  it("runs no handler, and does not even import the code of worker and container skills", async () => {
    const marker = (name: string) => project.tree.path(`${name}.ran`);
    const touch = (name: string) =>
      `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker(name))}, "");\n`;
    project.tree.writeFolder("plugins/inline", {
      "skill.json": { name: "inline", version: "1.0.0", handler: "./index.ts", input: { type: "object" } },
      "index.ts": `import { writeFileSync } from "node:fs";\nexport default () => { writeFileSync(${JSON.stringify(marker("inline"))}, ""); };\n`,
    });
    project.tree.writeFolder("plugins/worker", {
      "skill.json": {
        name: "worker",
        version: "1.0.0",
        handler: "./index.ts",
        runtime: "worker",
        input: { type: "object" },
      },
      "index.ts": `${touch("worker")}export default () => ({});\n`,
    });
    const result = await project.run(["validate", "plugins"]);
    expect(result.code, result.stdout).toBe(0);
    expect(existsSync(marker("inline"))).toBe(false);
    expect(existsSync(marker("worker"))).toBe(false);
  });

  it("checks a single package folder, and exits 1 for a folder that does not exist", async () => {
    project.tree.writeFolder("plugins/echo", echoFolder());
    const single = await project.run(["validate", "plugins/echo"]);
    expect(single.code).toBe(0);
    expect(single.stdout).toContain("1 package(s) checked");
    const missing = await project.run(["validate", "nowhere"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error NOT_FOUND: nowhere: no such folder/);
  });
});
