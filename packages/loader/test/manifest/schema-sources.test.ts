import { SkillLoader } from "@skillbox/loader";
import { displayPath } from "@skillbox/loader/internal";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { MESSAGE_INPUT, replyHandler, skillManifest } from "../loader-fixtures.js";

// Issue 14, reproduction 3: a skill declared its schemas in skill.json and through defineSkill,
// the two disagreed, and nothing said so. A schema is declared once; the loader derives it.

let tree: TemporaryTree;
let host: TemporaryHost;
const loaders: SkillLoader[] = [];

beforeEach(() => {
  tree = createTemporaryTree();
  tree.mkdir("plugins");
  // Handlers outside the workspace find the host's packages through links in the tree.
  tree.linkPackages("@skillbox/core", "zod");
  host = createTemporaryHost();
});

afterEach(async () => {
  for (const loader of loaders.splice(0)) loader.close();
  await host.dispose();
  tree.cleanup();
});

/** A file of the tree as messages name it. */
const shown = (path: string) => displayPath(tree.path(path));

/** A loader of the tree's plugins/ into the temporary host, closed after the test. */
function createLoader(): SkillLoader {
  const loader = new SkillLoader({
    dirs: [tree.path("plugins")],
    npm: false,
    registry: host.registry,
    executor: host.executor,
  });
  loaders.push(loader);
  return loader;
}

async function load() {
  return createLoader().loadAll();
}

/** A handler module declaring its schemas with zod (`input` and `output` are zod expressions). */
function zodHandler(input: string, output?: string): string {
  return [
    'import { defineSkill } from "@skillbox/core";',
    'import { z } from "zod";',
    "",
    "export default defineSkill({",
    `  input: ${input},`,
    ...(output === undefined ? [] : [`  output: ${output},`]),
    "  handler: (input) => ({ city: input.city, units: input.units }),",
    "});",
    "",
  ].join("\n");
}

const WEATHER_INPUT = 'z.object({ city: z.string().min(1), units: z.enum(["c", "f"]).default("c") })';
const WEATHER_OUTPUT = "z.object({ city: z.string(), units: z.string() })";

describe("one schema source", () => {
  it("derives the registered JSON Schemas from defineSkill when skill.json declares none, and validates calls with them", async () => {
    tree.writeFolder("plugins/weather", {
      "skill.json": { name: "weather", version: "1.0.0", handler: "./index.ts" },
      "index.ts": zodHandler(WEATHER_INPUT, WEATHER_OUTPUT),
    });
    const report = await load();
    expect(report.failed).toEqual([]);

    const skill = host.registry.getSkill("weather");
    const { $schema: _inputDialect, ...input } = z.toJSONSchema(
      z.object({ city: z.string().min(1), units: z.enum(["c", "f"]).default("c") }),
      { io: "input" },
    );
    const { $schema: _outputDialect, ...output } = z.toJSONSchema(
      z.object({ city: z.string(), units: z.string() }),
      { io: "output" },
    );
    expect(skill?.schema).toEqual({ input, output });

    const good = await host.executor.execute("weather", { city: "Oslo" });
    expect(good.output).toEqual({ city: "Oslo", units: "c" });
    const refused = await host.executor.execute("weather", { city: "Oslo", units: "k" });
    expect(refused.error?.code).toBe("INPUT_INVALID");
  });

  it("refuses a mix: input in skill.json (the schema source) and an output only in defineSkill", async () => {
    tree.writeFolder("plugins/weather", {
      "skill.json": {
        name: "weather",
        version: "1.0.0",
        handler: "./index.ts",
        input: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
      "index.ts": [
        'import { defineSkill } from "@skillbox/core";',
        'import { z } from "zod";',
        "export default defineSkill({",
        "  output: z.object({ temperature: z.number() }),",
        "  handler: (input: { city: string }) => ({ temperature: input.city.length }),",
        "});",
        "",
      ].join("\n"),
    });
    const report = await load();
    expect(report.failed).toEqual([]);
    const result = await host.executor.execute("weather", { city: "Oslo" });
    expect(result.status).toBe("error");
    expect(result.error?.code).toBe("MANIFEST_INVALID");
    expect(result.error?.message).toBe(
      `${shown("plugins/weather/index.ts")} defineSkill({ output }) declares a schema that ${shown("plugins/weather/skill.json")} lacks, while \`input\` there makes the manifest the schema source: declare \`output\` in the manifest, or move every schema into defineSkill`,
    );
  });

  it("refuses a package whose skill.json schema and defineSkill schema disagree, naming both places", async () => {
    tree.writeFolder("plugins/weather", {
      "skill.json": {
        name: "weather",
        version: "1.0.0",
        handler: "./index.ts",
        input: {
          type: "object",
          properties: { city: { type: "string" }, units: { type: "string", enum: ["c", "k"] } },
          required: ["city"],
        },
      },
      "index.ts": zodHandler(WEATHER_INPUT),
    });
    // The module is imported lazily (start stays fast); the first call imports and compares it.
    const loader = createLoader();
    const errors: { code: string; message: string }[] = [];
    loader.on("error", (failed) => errors.push({ code: failed.code, message: failed.message }));
    expect((await loader.loadAll()).failed).toEqual([]);

    const expected = `${shown("plugins/weather/skill.json")}: \`input\` and ${shown("plugins/weather/index.ts")} defineSkill({ input }) disagree at properties.city.minLength ((absent) vs 1); declare the schema in one place`;
    for (let call = 0; call < 2; call += 1) {
      const result = await host.executor.execute("weather", { city: "Oslo" });
      expect(result.status).toBe("error");
      expect(result.error).toMatchObject({ code: "MANIFEST_INVALID", message: expected });
    }
    expect(errors).toEqual([{ code: "MANIFEST_INVALID", message: expected }]);
  });

  it("refuses an edit that makes the two disagree, and keeps the last good version serving", async () => {
    const manifest = {
      name: "weather",
      version: "1.0.0",
      handler: "./index.ts",
      input: { type: "object", properties: { city: { type: "string", minLength: 1 } }, required: ["city"] },
    };
    const folder = tree.writeFolder("plugins/weather", {
      "skill.json": manifest,
      "index.ts": zodHandler("z.object({ city: z.string().min(1) })"),
    });
    const loader = createLoader();
    expect((await loader.loadAll()).failed).toEqual([]);
    // Served once, so the good version's module is the one in memory (it is imported lazily).
    expect((await host.executor.execute("weather", { city: "Oslo" })).output).toEqual({ city: "Oslo" });
    const errors: string[] = [];
    loader.on("error", (failed) => errors.push(failed.message));

    tree.write("plugins/weather/index.ts", zodHandler("z.object({ city: z.number() })"));
    await loader.syncPackage(folder);

    expect(errors).toEqual([
      expect.stringContaining('disagree at properties.city.type ("string" vs "number")'),
    ]);
    expect((await host.executor.execute("weather", { city: "Oslo" })).output).toEqual({ city: "Oslo" });
  });

  it("names the first difference of enums, required lists and types", async () => {
    // Each with an input its manifest accepts: the call gets as far as importing the module.
    const cases: [string, Record<string, unknown>, RegExp, unknown][] = [
      [
        "enum",
        { type: "object", properties: { units: { type: "string", enum: ["c", "k"] } } },
        /disagree at properties\.units\.enum \(\["c","k"\] vs \["c","f"\]\)/,
        { units: "c" },
      ],
      [
        "required",
        { type: "object", properties: { units: { type: "string", enum: ["f", "c"] } }, required: ["units"] },
        /disagree at required \(\["units"\] vs \(absent\)\)/,
        { units: "c" },
      ],
      ["type", { type: "array" }, /disagree at type \("array" vs "object"\)/, []],
    ];
    for (const [name, input] of cases) {
      tree.writeFolder(`plugins/${name}`, {
        "skill.json": { name, version: "1.0.0", handler: "./index.ts", input },
        "index.ts": zodHandler('z.object({ units: z.enum(["c", "f"]).optional() })'),
      });
    }
    expect((await load()).failed).toEqual([]);
    for (const [name, , expected, input] of cases) {
      const result = await host.executor.execute(name, input);
      expect(result.error?.code, name).toBe("MANIFEST_INVALID");
      expect(result.error?.message, name).toMatch(expected);
    }
  });

  it("loads a package whose two declarations agree up to key order, annotations, set order and zod's defaults", async () => {
    tree.writeFolder("plugins/weather", {
      "skill.json": {
        name: "weather",
        version: "1.0.0",
        handler: "./index.ts",
        input: {
          required: ["city"],
          properties: {
            units: { enum: ["f", "c"], type: "string", description: "Celsius or Fahrenheit" },
            city: { minLength: 1, type: "string" },
          },
          type: "object",
        },
        output: {
          type: "object",
          properties: { units: { type: "string" }, city: { type: "string" } },
          required: ["units", "city"],
        },
      },
      "index.ts": zodHandler(WEATHER_INPUT, WEATHER_OUTPUT),
    });
    const report = await load();
    expect(report.failed).toEqual([]);
    expect(host.registry.getSkill("weather")?.schema.input).toMatchObject({ required: ["city"] });
    expect((await host.executor.execute("weather", { city: "Oslo", units: "f" })).output).toEqual({
      city: "Oslo",
      units: "f",
    });
  });

  it("keeps a plain handler with a skill.json schema as it was: the manifest's schema, the module not imported at start", async () => {
    tree.writeFolder("plugins/echo", {
      "skill.json": skillManifest(),
      "index.ts": `throw new Error("imported at start");\n${replyHandler("one")}`,
    });
    const report = await load();
    expect(report.failed).toEqual([]);
    expect(host.registry.getSkill("echo")?.schema.input).toEqual(MESSAGE_INPUT);
  });

  it("refuses an invalid JSON Schema in skill.json at load, naming the field, instead of INPUT_INVALID at run time", async () => {
    tree.writeFolder("plugins/typo", {
      "skill.json": skillManifest({ name: "typo", input: { type: "strnig" } }),
      "index.ts": replyHandler("one"),
    });
    tree.writeFolder("plugins/packaged", {
      "package.json": {
        name: "packaged",
        version: "1.0.0",
        skillbox: { handler: "./index.ts", input: { type: "object" }, output: { required: "reply" } },
      },
      "index.ts": replyHandler("one"),
    });
    const report = await load();

    expect(report.loaded).toEqual([]);
    const messageOf = (name: string) => report.failed.find((failed) => failed.root.endsWith(name))?.message;
    expect(messageOf("typo")).toContain(
      `${shown("plugins/typo/skill.json")}: \`input\` is not a valid JSON Schema (schema is invalid: data/type must be equal to one of the allowed values`,
    );
    expect(messageOf("packaged")).toContain(
      `${shown("plugins/packaged/package.json")}: \`skillbox.output\` is not a valid JSON Schema (schema is invalid: data/required must be array`,
    );
    expect(report.failed.map((failed) => failed.code)).toEqual(["MANIFEST_INVALID", "MANIFEST_INVALID"]);
    await expect(host.executor.execute("typo", { msg: "hi" })).rejects.toMatchObject({
      code: "SKILL_NOT_FOUND",
    });
  });

  it("is refused by register() as well, for skills registered without the loader", () => {
    expect(() =>
      host.registry.register({ name: "typo", version: "1.0.0", handler: "typo", input: { type: "strnig" } }),
    ).toThrow(
      expect.objectContaining({
        code: "REGISTRATION_INVALID",
        message: expect.stringContaining(
          'register("typo"): `input` is not a valid JSON Schema (schema is invalid: data/type must be equal',
        ),
      }),
    );
  });

  it("refuses an invalid JSON Schema given to defineSkill, naming the module", async () => {
    tree.writeFolder("plugins/coded", {
      "skill.json": { name: "coded", version: "1.0.0", handler: "./index.ts" },
      "index.ts": [
        'import { defineSkill } from "@skillbox/core";',
        'export default defineSkill({ input: { type: "object", properties: { a: { $ref: "#/nowhere" } } }, handler: () => ({}) });',
        "",
      ].join("\n"),
    });
    const report = await load();
    expect(report.failed[0]?.message).toContain(
      `${shown("plugins/coded/index.ts")}: defineSkill({ input }) is not a valid JSON Schema (can't resolve reference #/nowhere`,
    );
  });

  it("never runs a container skill's module on the host to compare schemas: its manifest is the source", async () => {
    tree.writeFolder("plugins/boxed", {
      "skill.json": skillManifest({ name: "boxed", runtime: "container" }),
      "index.ts": `throw new Error("ran on the host");\n${zodHandler(WEATHER_INPUT)}`,
    });
    const report = await load();
    expect(report.failed).toEqual([]);
    expect(host.registry.getSkill("boxed")?.schema.input).toEqual(MESSAGE_INPUT);
  });

  it("does not import an inline module at start to compare its defineSkill schemas: start stays lazy", async () => {
    tree.writeFolder("plugins/weather", {
      "skill.json": skillManifest({ name: "weather" }),
      "index.ts": `throw new Error("imported at start");\n${zodHandler(WEATHER_INPUT)}`,
    });
    const report = await load();
    expect(report.failed).toEqual([]);
    expect(host.registry.getSkill("weather")?.schema.input).toEqual(MESSAGE_INPUT);
  });
});
