import { type CliProject, createCliProject } from "@skillbox/test-helpers/cli-process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { boomFolder, echoFolder } from "./cli-fixtures.js";

let project: CliProject;

beforeEach(() => {
  project = createCliProject();
  project.tree.writeFolder("plugins/echo", echoFolder());
  project.tree.writeFolder("plugins/boom", boomFolder());
});

afterEach(async () => {
  await project.cleanup();
});

describe("skillbox run", { timeout: 60_000 }, () => {
  it("prints the output as JSON and exits 0", async () => {
    const result = await project.run(["run", "echo@^1", "--input", '{"msg":"hello"}']);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ echoed: "hello" });
  });

  it("warns naming a configured folder that does not exist, and does not run skills earlier runs loaded", async () => {
    expect((await project.run(["run", "echo", "--input", '{"msg":"x"}'])).code).toBe(0);
    project.tree.write("skillbox.config.mjs", 'export default { dirs: ["./nowhere"], npm: false };\n');

    const result = await project.run(["run", "echo", "--input", '{"msg":"x"}']);

    expect(result.stderr).toMatch(/^warning FOLDER_NOT_FOUND: nowhere: no such folder/m);
    expect(result.stderr).toMatch(/^error SKILL_NOT_FOUND: /m);
    expect(result.code).toBe(1);
  });

  it("reads the input from stdin and from --input-file", async () => {
    const piped = await project.run(["run", "echo"], { stdin: '{"msg":"piped"}' });
    expect(JSON.parse(piped.stdout)).toEqual({ echoed: "piped" });
    project.tree.write("input.json", { msg: "from a file" });
    const fromFile = await project.run(["run", "echo", "--input-file", "input.json"]);
    expect(JSON.parse(fromFile.stdout)).toEqual({ echoed: "from a file" });
  });

  it("exits 1 with the error code and message when the execution fails", async () => {
    const invalid = await project.run(["run", "echo", "--input", '{"msg":1}']);
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toBe("");
    expect(invalid.stderr).toMatch(/^error INPUT_INVALID: echo@1\.0\.0: /);

    const failed = await project.run(["run", "boom"]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^error WEATHER_DOWN: boom@1\.0\.0: the weather station is down/);

    const missing = await project.run(["run", "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error SKILL_NOT_FOUND: /);

    // A usage error, not a failed execution: exit 2.
    const badJson = await project.run(["run", "echo", "--input", "{msg"]);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toMatch(/^error INPUT_INVALID: --input is not valid JSON/);
  });

  it("prints the whole execution record with --json", async () => {
    const success = await project.run(["run", "echo", "--input", '{"msg":"x"}', "--json"]);
    expect(success.code).toBe(0);
    expect(JSON.parse(success.stdout)).toMatchObject({
      skillName: "echo",
      skillVersion: "1.0.0",
      status: "success",
      output: { echoed: "x" },
      attempts: 1,
    });
    const failure = await project.run(["run", "boom", "--json"]);
    expect(failure.code).toBe(1);
    expect(JSON.parse(failure.stdout)).toMatchObject({ status: "error", error: { code: "WEATHER_DOWN" } });
  });
});

describe("skillbox enable / disable", { timeout: 60_000 }, () => {
  it("a disabled version refuses to run (SKILL_DISABLED) until enabled again, across loads", async () => {
    const disabled = await project.run(["disable", "echo@1.0.0"]);
    expect(disabled.code).toBe(0);
    expect(disabled.stdout).toContain("disabled echo@1.0.0");

    const refused = await project.run(["run", "echo", "--input", '{"msg":"x"}']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error SKILL_DISABLED: echo@1\.0\.0 is disabled/);

    const listed = JSON.parse((await project.run(["list", "--json"])).stdout);
    expect(listed.find((skill: { name: string }) => skill.name === "echo").enabled).toBe(false);

    expect((await project.run(["enable", "echo@1.0.0"])).stdout).toContain("enabled echo@1.0.0");
    const ran = await project.run(["run", "echo", "--input", '{"msg":"back"}']);
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual({ echoed: "back" });
  });

  it("stays disabled after an edit of the code; enabling it runs the edited code", async () => {
    await project.run(["disable", "echo@1.0.0"]);
    project.tree.write(
      "plugins/echo/index.ts",
      'export default (input: any) => ({ echoed: input.msg + "!" });\n',
    );
    const refused = await project.run(["run", "echo", "--input", '{"msg":"edited"}']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error SKILL_DISABLED: /m);

    await project.run(["enable", "echo@1.0.0"]);
    const ran = await project.run(["run", "echo", "--input", '{"msg":"edited"}']);
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual({ echoed: "edited!" });
  });

  it("exits 1 for an unknown skill", async () => {
    const result = await project.run(["disable", "nope@1.0.0"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error SKILL_NOT_FOUND: no skill matches "nope@1\.0\.0"/);
  });
});

describe("skillbox list / info / executions", { timeout: 60_000 }, () => {
  it("list --json prints every loaded skill version", async () => {
    const result = await project.run(["list", "--json"]);
    expect(result.code).toBe(0);
    const skills = JSON.parse(result.stdout) as {
      name: string;
      version: string;
      enabled: boolean;
      runtime: string;
    }[];
    expect(skills.map((skill) => `${skill.name}@${skill.version}`)).toEqual(["boom@1.0.0", "echo@1.0.0"]);
    expect(skills.every((skill) => skill.enabled && skill.runtime === "inline")).toBe(true);

    const table = await project.run(["list"]);
    expect(table.stdout).toMatch(/^NAME\s+VERSION\s+RUNTIME\s+STATE/);
    expect(table.stdout).toMatch(
      /echo\s+1\.0\.0\s+inline\s+enabled\s+system\s+plugins\/echo\s+Returns the message/,
    );
  });

  it("info shows versions, schemas, runtime and source", async () => {
    const text = await project.run(["info", "echo"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("echo@1.0.0  enabled");
    expect(text.stdout).toMatch(/runtime\s+inline/);
    expect(text.stdout).toMatch(/source\s+plugins\/echo/);
    expect(text.stdout).toContain('"required": [');
    const json = JSON.parse((await project.run(["info", "echo", "--json"])).stdout);
    expect(json[0]).toMatchObject({
      name: "echo",
      version: "1.0.0",
      schema: { input: { required: ["msg"] } },
    });
    const missing = await project.run(["info", "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error SKILL_NOT_FOUND: /);
  });

  it("executions --json lists the audit trail, filtered by skill and status", async () => {
    await project.run(["run", "echo", "--input", '{"msg":"one"}']);
    await project.run(["run", "boom"]);
    const all = JSON.parse((await project.run(["executions", "--json"])).stdout) as {
      skillName: string;
      status: string;
    }[];
    expect(all.map((execution) => `${execution.skillName}:${execution.status}`)).toEqual([
      "boom:error",
      "echo:success",
    ]);
    const errors = JSON.parse((await project.run(["executions", "--status", "error", "--json"])).stdout);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ skillName: "boom", error: { code: "WEATHER_DOWN" } });
    const echoOnly = JSON.parse(
      (await project.run(["executions", "--skill", "echo", "--limit", "5", "--json"])).stdout,
    );
    expect(echoOnly).toHaveLength(1);
    // Listings carry previews of the bodies; `executions <id>` prints the full record.
    expect(echoOnly[0]).not.toHaveProperty("output");
    expect(echoOnly[0].outputPreview).toEqual({ text: '{"echoed":"one"}', bytes: 16, truncated: false });
    const full = await project.run(["executions", echoOnly[0].id, "--json"]);
    expect(full.code).toBe(0);
    expect(JSON.parse(full.stdout)).toMatchObject({ id: echoOnly[0].id, output: { echoed: "one" } });
    const unknown = await project.run(["executions", "no-such-id"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error EXECUTION_NOT_FOUND: no execution "no-such-id"/);

    const bad = await project.run(["executions", "--status", "nope"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error USAGE: .*"nope" is not a status/);
  });
});

describe("skillbox (program)", { timeout: 60_000 }, () => {
  it("prints help and the version with exit 0, and usage errors as error USAGE with exit 2", async () => {
    const help = await project.run(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: skillbox");
    const version = await project.run(["--version"]);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const unknown = await project.run(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^error USAGE: unknown command 'frobnicate'/);
  });
});
