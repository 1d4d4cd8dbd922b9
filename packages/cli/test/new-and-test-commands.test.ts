import { readFileSync } from "node:fs";
import { type CliProject, createCliProject } from "@skillbox/test-helpers/cli-process";
import { hasTestImage } from "@skillbox/test-helpers/engine-availability";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { skillFolder } from "./cli-fixtures.js";

let project: CliProject;

beforeEach(() => {
  project = createCliProject();
});

afterEach(async () => {
  await project.cleanup();
});

describe("skillbox new", { timeout: 60_000 }, () => {
  it("scaffolds a TypeScript skill whose examples pass under skillbox test", async () => {
    const created = await project.run(["new", "greet"]);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain("created plugins/greet");
    const manifest = JSON.parse(readFileSync(project.tree.path("plugins/greet/skill.json"), "utf8"));
    expect(manifest).toMatchObject({ name: "greet", runtime: "inline", handler: "./index.ts" });
    expect(manifest.input.type).toBe("object");
    expect(manifest.output.type).toBe("object");
    expect(manifest.examples.length).toBeGreaterThan(0);
    expect(readFileSync(project.tree.path("plugins/greet/index.ts"), "utf8")).toContain(
      'import type { SkillHandler } from "@skillbox/core";',
    );
    expect(readFileSync(project.tree.path("plugins/greet/README.md"), "utf8")).toContain("# greet");

    const tested = await project.run(["test", "greet"]);
    expect(tested.stderr).toBe("");
    expect(tested.code).toBe(0);
    expect(tested.stdout).toContain("greet@0.1.0");
    expect(tested.stdout).toMatch(/✓ example 1: greets by name/);
    expect(tested.stdout).toContain("2 passed, 0 failed");
  });

  it("scaffolds worker skills, and scoped names in their @scope folder", async () => {
    const created = await project.run(["new", "@acme/slow", "--runtime", "worker"]);
    expect(created.code).toBe(0);
    const manifest = JSON.parse(readFileSync(project.tree.path("plugins/@acme/slow/skill.json"), "utf8"));
    expect(manifest).toMatchObject({ name: "@acme/slow", runtime: "worker" });
    const tested = await project.run(["test", "@acme/slow"]);
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.stdout).toContain("2 passed, 0 failed");
  });

  it.runIf(hasTestImage() || process.env.CI)(
    "scaffolds container skills whose examples pass in a sandbox (the container runtime is registered)",
    async () => {
      expect((await project.run(["new", "boxed", "--runtime", "container"])).code).toBe(0);
      const tested = await project.run(["test", "boxed"]);
      expect(tested.code, tested.stdout + tested.stderr).toBe(0);
      expect(tested.stdout).toContain("2 passed, 0 failed");
    },
  );

  it("writes into --dir", async () => {
    const created = await project.run(["new", "greet", "--dir", "skills", "--runtime", "container"]);
    expect(created.code).toBe(0);
    const manifest = JSON.parse(readFileSync(project.tree.path("skills/greet/skill.json"), "utf8"));
    expect(manifest).toMatchObject({ runtime: "container", sandbox: { network: false } });
  });

  it("refuses to overwrite an existing folder", async () => {
    project.tree.writeFolder("plugins/greet", { "keep.txt": "mine" });
    const result = await project.run(["new", "greet"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error ALREADY_EXISTS: plugins\/greet already exists/);
    expect(readFileSync(project.tree.path("plugins/greet/keep.txt"), "utf8")).toBe("mine");
  });

  it("refuses a name that is not a skill name", async () => {
    const result = await project.run(["new", "no spaces"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error USAGE: "no spaces" is not a skill name/);
  });
});

describe("skillbox test", { timeout: 60_000 }, () => {
  it("reports a mismatching example and a failing one, and exits 1", async () => {
    project.tree.writeFolder(
      "plugins/shout",
      skillFolder(
        {
          name: "shout",
          input: { type: "object", properties: { text: { type: "string" } } },
          output: { type: "object", properties: { loud: { type: "string" } }, required: ["loud"] },
          examples: [
            { description: "right", input: { text: "hi" }, output: { loud: "HI" } },
            { description: "wrong expectation", input: { text: "hi" }, output: { loud: "hi" } },
            { description: "schema only", input: { text: "yo" } },
            { description: "invalid input", input: { text: 42 } },
          ],
        },
        "return { loud: String(input.text).toUpperCase() };",
      ),
    );
    const result = await project.run(["test"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/✓ example 1: right/);
    expect(result.stdout).toMatch(/✗ example 2: wrong expectation/);
    expect(result.stdout).toContain('expected {"loud":"hi"}');
    expect(result.stdout).toContain('actual   {"loud":"HI"}');
    expect(result.stdout).toMatch(/✓ example 3: schema only \[output schema\]/);
    expect(result.stdout).toMatch(/✗ example 4: invalid input/);
    expect(result.stdout).toContain("INPUT_INVALID");
    expect(result.stdout).toContain("2 passed, 2 failed");

    const json = await project.run(["test", "shout", "--json"]);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout);
    expect(report).toMatchObject({ ok: false, passed: 2, failed: 2 });
    expect(report.results.map((entry: { passed: boolean }) => entry.passed)).toEqual([
      true,
      false,
      true,
      false,
    ]);
    expect(report.results[1].failure.code).toBe("OUTPUT_MISMATCH");
  });
});
