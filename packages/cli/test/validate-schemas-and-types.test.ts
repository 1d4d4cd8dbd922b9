import { type CliProject, createCliProject } from "@skillbox/test-helpers/cli-process";
import type { TreeContent } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { echoFolder } from "./cli-fixtures.js";

// Issue 14: `skillbox validate` said ✓ for a skill whose skill.json schema and defineSkill schema
// disagreed, for a JSON Schema the executor cannot compile, and for TypeScript that does not
// typecheck. It now checks what the loader and the executor will refuse, and the types.

let project: CliProject;

beforeEach(() => {
  project = createCliProject();
  project.tree.linkPackages("zod");
});

afterEach(async () => {
  await project.cleanup();
});

interface Report {
  ok: boolean;
  packages: { name: string; ok: boolean }[];
  problems: { file: string; code: string; field?: string; message: string }[];
  warnings?: { root: string; message: string }[];
}

async function validate(args: string[] = [], env?: Record<string, string | undefined>) {
  const result = await project.run(["validate", ...args, "--json"], env === undefined ? {} : { env });
  return { ...result, report: JSON.parse(result.stdout) as Report };
}

/** A skill whose index.ts declares `input` with zod (`{ city: string (min 1) }`). */
function zodSkill(manifest: Record<string, unknown> = {}): Record<string, TreeContent> {
  return {
    "skill.json": { name: "weather", version: "1.0.0", handler: "./index.ts", ...manifest },
    "index.ts": [
      'import { defineSkill } from "@skillbox/core";',
      'import { z } from "zod";',
      "",
      "export default defineSkill({",
      "  input: z.object({ city: z.string().min(1) }),",
      "  handler: (input) => ({ city: input.city }),",
      "});",
      "",
    ].join("\n"),
  };
}

/** A tsconfig.json as a scaffolded skill package has one. */
const TSCONFIG = {
  compilerOptions: {
    strict: true,
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    skipLibCheck: true,
    noEmit: true,
  },
  include: ["*.ts"],
};

describe("skillbox validate: schemas, interceptor options and types", { timeout: 120_000 }, () => {
  it("fails a skill whose skill.json schema and defineSkill schema disagree, naming both places", async () => {
    project.tree.writeFolder(
      "plugins/weather",
      zodSkill({ input: { type: "object", properties: { city: { type: "number" } }, required: ["city"] } }),
    );
    const { code, report } = await validate();
    expect(code).toBe(1);
    expect(report.problems).toEqual([
      {
        root: project.tree.path("plugins/weather"),
        file: "plugins/weather/skill.json",
        code: "MANIFEST_INVALID",
        field: "input",
        message:
          'plugins/weather/skill.json: `input` and plugins/weather/index.ts defineSkill({ input }) disagree at properties.city.type ("number" vs "string"); declare the schema in one place',
      },
    ]);
    const printed = await project.run(["validate"]);
    expect(printed.code).toBe(1);
    expect(printed.stdout).toContain("✗ skill weather@1.0.0");
    expect(printed.stdout).toContain(
      "MANIFEST_INVALID: plugins/weather/skill.json: `input` and plugins/weather/index.ts",
    );
  });

  it("fails a schema the executor cannot compile, naming the file and the field", async () => {
    project.tree.writeFolder("plugins/typo", {
      "skill.json": { name: "typo", version: "1.0.0", handler: "./index.ts", input: { type: "strnig" } },
      "index.ts": "export default () => ({});\n",
    });
    const { code, report } = await validate();
    expect(code).toBe(1);
    expect(report.problems).toEqual([
      expect.objectContaining({
        file: "plugins/typo/skill.json",
        code: "MANIFEST_INVALID",
        field: "input",
        message: expect.stringContaining(
          "plugins/typo/skill.json: `input` is not a valid JSON Schema (schema is invalid: data/type must be equal to one of the allowed values",
        ),
      }),
    ]);
  });

  it("fails an interceptor whose factory throws on the options of its interceptor.json", async () => {
    project.tree.writeFolder("plugins/policy", {
      "interceptor.json": { name: "policy", handler: "./index.ts", options: { mode: "sometimes" } },
      "index.ts": [
        "export default (options: { mode?: string }) => {",
        '  if (options.mode !== "strict") throw new Error("mode must be \\"strict\\", got " + JSON.stringify(options.mode));',
        "  return { before() {} };",
        "};",
        "",
      ].join("\n"),
    });
    const { code, report } = await validate();
    expect(code).toBe(1);
    expect(report.problems).toEqual([
      expect.objectContaining({
        file: "plugins/policy/interceptor.json",
        code: "HANDLER_INVALID",
        message:
          'plugins/policy/index.ts: the interceptor factory threw with the options of plugins/policy/interceptor.json: mode must be "strict", got "sometimes"',
      }),
    ]);
  });

  it("typechecks a package with a tsconfig.json with the project's tsc, naming file:line", async () => {
    project.tree.linkPackages("typescript");
    project.tree.writeFolder("plugins/typed", {
      "package.json": { name: "typed", private: true, type: "module" },
      "tsconfig.json": TSCONFIG,
      "skill.json": { name: "typed", version: "1.0.0", handler: "./index.ts", input: { type: "object" } },
      "index.ts": [
        "export default function handler(): { count: number } {",
        '  const count: number = "three";',
        "  return { count };",
        "}",
        "",
      ].join("\n"),
    });
    const { code, report } = await validate();
    expect(code).toBe(1);
    expect(report.problems).toEqual([
      {
        root: project.tree.path("plugins/typed"),
        file: "plugins/typed/index.ts",
        code: "TYPE_ERROR",
        message:
          "plugins/typed/index.ts:2:9: error TS2322: Type 'string' is not assignable to type 'number'.",
      },
    ]);
    expect(report.packages).toEqual([expect.objectContaining({ name: "typed", ok: false })]);
  });

  it("passes good packages: schemas from one place, types that check, a factory that accepts its options", async () => {
    project.tree.linkPackages("typescript");
    project.tree.writeFolder("plugins/echo", echoFolder());
    project.tree.writeFolder("plugins/weather", {
      ...zodSkill(),
      "package.json": { name: "weather", private: true, type: "module" },
      "tsconfig.json": TSCONFIG,
    });
    project.tree.writeFolder("plugins/policy", {
      "interceptor.json": { name: "policy", handler: "./index.ts", options: { mode: "strict" } },
      "index.ts": "export default (options: { mode?: string }) => ({ before() {}, mode: options.mode });\n",
    });
    const { code, report, stderr } = await validate();
    expect(report.problems, stderr).toEqual([]);
    expect(code).toBe(0);
    expect(report.warnings).toBeUndefined();
    expect(report.packages.map((entry) => [entry.name, entry.ok])).toEqual([
      ["echo", true],
      ["policy", true],
      ["weather", true],
    ]);
  });

  it("warns, and does not fail, when no TypeScript is installed to typecheck a package with", async () => {
    project.tree.writeFolder("plugins/typed", {
      "tsconfig.json": TSCONFIG,
      "skill.json": { name: "typed", version: "1.0.0", handler: "./index.ts", input: { type: "object" } },
      "index.ts": "export default (): number => 1;\n",
    });
    // pnpm's shims put the workspace's packages on NODE_PATH: a user's shell has no such thing.
    const { code, report } = await validate([], { NODE_PATH: undefined });
    expect(code).toBe(0);
    expect(report.warnings).toEqual([
      {
        root: project.tree.path("plugins/typed"),
        message: expect.stringContaining(
          "plugins/typed/tsconfig.json: not typechecked, TypeScript is not installed (add `typescript`",
        ),
      },
    ]);
    const printed = await project.run(["validate"], { env: { NODE_PATH: undefined } });
    expect(printed.stdout).toContain("! plugins/typed/tsconfig.json: not typechecked");
  });
});
