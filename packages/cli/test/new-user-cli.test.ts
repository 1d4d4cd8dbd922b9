import { cpSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  type CliProject,
  type CliResult,
  createCliProject,
  runRecordingImports,
} from "@skillbox/test-helpers/cli-process";
import { hasTestImage } from "@skillbox/test-helpers/engine-availability";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { echoFolder, skillFolder } from "./cli-fixtures.js";

/** The repository's logger plugin, copied into projects as a user would copy it. */
const LOGGER_PLUGIN = fileURLToPath(new URL("../../../plugins/logger", import.meta.url));

let project: CliProject;

beforeEach(() => {
  project = createCliProject();
});

afterEach(async () => {
  await project.cleanup();
});

/** The arguments of the command `skillbox new` printed after `next:` (without `skillbox`). */
function nextCommand(created: CliResult): string[] {
  const match = /^next: skillbox (.+?), then skillbox /m.exec(created.stdout);
  if (match === null) throw new Error(`no next: line in\n${created.stdout}`);
  return match[1]!.split(" ");
}

/** Copies the logger plugin (index.ts, interceptor.json) into the project's `plugins/logger`. */
function installLoggerPlugin(): void {
  project.tree.linkPackages("zod");
  for (const file of ["index.ts", "interceptor.json"]) {
    cpSync(`${LOGGER_PLUGIN}/${file}`, project.tree.path("plugins/logger", file));
  }
}

/** Lines that look like a JSON object (what the logger plugin wrote before). */
function jsonLines(text: string): string[] {
  return text.split("\n").filter((line) => line.trimStart().startsWith("{"));
}

describe("skillbox new --dir, then the printed next command", { timeout: 120_000 }, () => {
  const runtimes = ["inline", "worker", ...(hasTestImage() || process.env.CI ? ["container"] : [])];

  it.each(runtimes)("a %s skill passes test, run and validate as generated and printed", async (runtime) => {
    const created = await project.run(["new", "weather", "--dir", "myskills", "--runtime", runtime]);
    expect(created.code, created.stderr).toBe(0);
    const next = nextCommand(created);
    expect(next).toEqual(["test", "weather", "--dir", "myskills"]);

    const tested = await project.run(next);
    expect(tested.stderr).toBe("");
    expect(tested.code).toBe(0);
    expect(tested.stdout).toContain("2 passed, 0 failed");

    const ran = await project.run(["run", "weather", "--dir", "myskills", "--input", '{"name":"Ada"}']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual({ message: "Hello, Ada!" });
    const validated = await project.run(["validate", "--dir", "myskills"]);
    expect(validated.code, validated.stdout).toBe(0);
  });

  it("writes a package.json, a tsconfig.json and a type-only handler, and ignores .skillbox/", async () => {
    project.tree.write(".gitignore", "node_modules/");
    expect((await project.run(["new", "@acme/weather", "--dir", "myskills"])).code).toBe(0);
    const folder = (file: string) => project.tree.path("myskills/@acme/weather", file);
    const core = JSON.parse(
      readFileSync(fileURLToPath(new URL("../../core/package.json", import.meta.url)), "utf8"),
    ) as { version: string };
    const manifest = JSON.parse(readFileSync(folder("package.json"), "utf8"));
    expect(manifest).toMatchObject({
      name: "@acme/weather",
      version: "0.1.0",
      type: "module",
      scripts: { typecheck: "tsc --noEmit" },
      peerDependencies: { "@skillbox/core": `^${core.version}` },
      devDependencies: { "@skillbox/core": `^${core.version}`, typescript: expect.any(String) },
    });
    expect(JSON.parse(readFileSync(folder("tsconfig.json"), "utf8")).compilerOptions).toMatchObject({
      module: "NodeNext",
      strict: true,
      noEmit: true,
    });
    const handler = readFileSync(folder("index.ts"), "utf8");
    // One schema source: skill.json. The handler only imports types, so it runs with nothing installed.
    expect(handler).toContain('import type { SkillHandler } from "@skillbox/core";');
    expect(handler).not.toMatch(/^import (?!type )/m);
    expect(handler).not.toContain("defineSkill");
    expect(readFileSync(folder("README.md"), "utf8")).toContain("skillbox test @acme/weather --dir myskills");
    expect(readFileSync(project.tree.path(".gitignore"), "utf8")).toBe(
      "node_modules/\n# skillbox's database and sandbox state\n.skillbox/\n",
    );
    // A second skill leaves a .gitignore that already has it alone.
    const second = await project.run(["new", "other", "--dir", "myskills"]);
    expect(second.stdout).not.toContain("updated");
    expect(readFileSync(project.tree.path(".gitignore"), "utf8").match(/\.skillbox\//g)).toHaveLength(1);
  });

  it("prints a next command without --dir when the skill went to the configured folder", async () => {
    const created = await project.run(["new", "greet"]);
    expect(nextCommand(created)).toEqual(["test", "greet"]);
    expect((await project.run(nextCommand(created))).code).toBe(0);
  });
});

describe("folders as arguments", { timeout: 60_000 }, () => {
  beforeEach(() => {
    project.tree.writeFolder("elsewhere/echo", echoFolder());
  });

  it("run, test, list and info take --dir; list also takes folders as arguments", async () => {
    const ran = await project.run(["run", "echo", "--dir", "elsewhere", "--input", '{"msg":"x"}']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual({ echoed: "x" });

    const tested = await project.run(["test", "echo", "--dir", "elsewhere"]);
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.stdout).toContain("1 passed, 0 failed");

    for (const args of [
      ["list", "--json", "--dir", "elsewhere"],
      ["list", "elsewhere", "--json"],
    ]) {
      const listed = await project.run(args);
      expect(listed.code, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout).map((skill: { name: string }) => skill.name)).toEqual(["echo"]);
    }

    const info = await project.run(["info", "echo", "--dir", "elsewhere"]);
    expect(info.code, info.stderr).toBe(0);
    expect(info.stdout).toMatch(/source\s+elsewhere\/echo/);
  });

  it("test of a skill in another folder says to give --dir", async () => {
    const tested = await project.run(["test", "echo"]);
    expect(tested.code).toBe(1);
    expect(tested.stderr).toMatch(
      /^error SKILL_NOT_FOUND: no skill named "echo" was loaded from plugins; .*--dir/m,
    );
  });
});

describe("did you mean", { timeout: 60_000 }, () => {
  beforeEach(() => {
    project.tree.writeFolder("plugins/weather", {
      ...skillFolder({ name: "weather", input: { type: "object" } }, "return {};"),
    });
    project.tree.writeFolder("plugins/github-issues", {
      ...skillFolder({ name: "github.issues", input: { type: "object" } }, "return {};"),
    });
  });

  it("run, test and info suggest the closest registered names for a name that is not there", async () => {
    const ran = await project.run(["run", "wether"]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/^error SKILL_NOT_FOUND: .*; did you mean "weather"\?$/m);

    const tested = await project.run(["test", "weathr"]);
    expect(tested.stderr).toMatch(/^error SKILL_NOT_FOUND: .*; did you mean "weather"\?$/m);

    const info = await project.run(["info", "issues"]);
    expect(info.stderr).toMatch(/^error SKILL_NOT_FOUND: .*; did you mean "github\.issues"\?$/m);

    const far = await project.run(["run", "translate"]);
    expect(far.stderr).toMatch(/^error SKILL_NOT_FOUND: /m);
    expect(far.stderr).not.toContain("did you mean");
  });
});

describe("exit codes", { timeout: 60_000 }, () => {
  beforeEach(() => {
    project.tree.writeFolder("plugins/echo", echoFolder());
  });

  it("exits 2 for usage errors and 1 for failed executions and tests", async () => {
    const usage = [
      ["frobnicate"],
      ["run"],
      ["run", "echo", "--frobnicate"],
      ["run", "echo", "--input", "{msg"],
      ["run", "echo", "--timeout", "soon"],
      ["executions", "--status", "nope"],
      ["new", "no spaces"],
    ];
    for (const args of usage) {
      const result = await project.run(args);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(/^error [A-Z_]+: /m);
    }
    const failedRun = await project.run(["run", "echo", "--input", '{"msg":1}']);
    expect(failedRun.code).toBe(1);
    expect(failedRun.stderr).toMatch(/^error INPUT_INVALID: echo@1\.0\.0: /);

    project.tree.write("plugins/echo/index.ts", "export default () => ({ echoed: 'wrong' });\n");
    const failedTest = await project.run(["test"]);
    expect(failedTest.code).toBe(1);
    expect(failedTest.stdout).toContain("0 passed, 1 failed");

    const help = await project.run(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(
      /Exit codes:\n\s+0\s+success\n\s+1\s+[^\n]*\n(?:\s{4,}[^\n]*\n)*\s+2\s+usage error/,
    );
  });
});

describe("skillbox executions <id>", { timeout: 60_000 }, () => {
  it("shows input, output, error, attempts, timings, the parent and the children", async () => {
    project.tree.writeFolder(
      "plugins/inner",
      skillFolder(
        { name: "inner", input: { type: "object" }, retry: { maxAttempts: 2, initialDelayMs: 1 } },
        // A plain error is retried (a SkillboxError with a code of its own would not be).
        'if (input.fail) throw new Error("inner broke");\n  return { doubled: input.value * 2 };',
      ),
    );
    project.tree.writeFolder("plugins/outer", {
      "skill.json": { name: "outer", version: "1.0.0", handler: "./index.ts", input: { type: "object" } },
      "index.ts": [
        "export default async function handler(input: any, context: any): Promise<unknown> {",
        "  const first = await context.call('inner', { value: input.value });",
        "  await context.call('inner', { fail: true }).catch(() => undefined);",
        "  return { first };",
        "}",
        "",
      ].join("\n"),
    });
    const ran = await project.run(["run", "outer", "--input", '{"value":21}', "--json"]);
    expect(ran.code, ran.stderr).toBe(0);
    const outer = JSON.parse(ran.stdout) as { id: string };

    const shown = await project.run(["executions", outer.id]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^outer@1\\.0\\.0  success  ${outer.id}$`, "m"));
    expect(shown.stdout).toMatch(/^ {2}attempts\s+1$/m);
    expect(shown.stdout).toMatch(/^ {2}started\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC$/m);
    expect(shown.stdout).toMatch(/^ {2}duration\s+[\d.]+ ms$/m);
    expect(shown.stdout).toMatch(/^ {2}input\n {4}\{\n {6}"value": 21\n {4}\}$/m);
    expect(shown.stdout).toMatch(/^ {2}output\n {4}\{\n {6}"first": \{\n {8}"doubled": 42/m);
    expect(shown.stdout).toMatch(/^ {2}children \(2, through ctx\.call\)$/m);
    const children = [...shown.stdout.matchAll(/^ {4}(\S+) {2}inner@1\.0\.0 {2}(\w+)(.*)$/gm)];
    expect(children.map((child) => child[2])).toEqual(["success", "error"]);
    expect(children[1]![3]).toContain("HANDLER_ERROR");

    const failed = await project.run(["executions", children[1]![1]!]);
    expect(failed.code).toBe(0);
    expect(failed.stdout).toMatch(/^ {2}error\s+HANDLER_ERROR: .*inner broke/m);
    expect(failed.stdout).toMatch(/^ {2}attempts\s+2$/m);
    expect(failed.stdout).toMatch(
      new RegExp(`^ {2}parent\\s+${outer.id} {2}outer@1\\.0\\.0 {2}success`, "m"),
    );

    const json = await project.run(["executions", outer.id, "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: outer.id, output: { first: { doubled: 42 } } });
  });
});

describe("--version", { timeout: 60_000 }, () => {
  const version = (
    JSON.parse(readFileSync(fileURLToPath(new URL("../package.json", import.meta.url)), "utf8")) as {
      version: string;
    }
  ).version;

  it("--version, -V, -v and version print the version", async () => {
    for (const flag of ["--version", "-V", "-v", "version"]) {
      const result = await project.run([flag]);
      expect({ flag, code: result.code, stdout: result.stdout }).toEqual({
        flag,
        code: 0,
        stdout: `${version}\n`,
      });
    }
    expect((await project.run(["--db", "x.db", "version"])).stdout).toBe(`${version}\n`);
  });

  it("loads none of core, the loader, the server, the sandbox or better-sqlite3 to answer", async () => {
    const heavy = /\/packages\/(core|loader|server|sandbox)\/|\/@skillbox\/|better-sqlite3/;
    const importsOf = async (args: string[]) => {
      const { result, imports } = await runRecordingImports(project, args);
      expect(result.code, result.stderr).toBe(0);
      return imports;
    };

    const forVersion = await importsOf(["--version"]);
    // The recorder saw the command's own entry, so an empty list below means something.
    expect(forVersion.some((url) => url.endsWith("/packages/cli/dist/main.js"))).toBe(true);
    expect(forVersion.filter((url) => heavy.test(url))).toEqual([]);
    // The same recorder does see them when a command needs them.
    expect((await importsOf(["list", "--json"])).some((url) => heavy.test(url))).toBe(true);
  });
});

describe("the logger plugin in the CLI", { timeout: 60_000 }, () => {
  beforeEach(() => {
    project.tree.writeFolder("plugins/echo", echoFolder());
    installLoggerPlugin();
  });

  it("run and test print no logger JSON line", async () => {
    const ran = await project.run(["run", "echo", "--input", '{"msg":"x"}']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toBe("");
    expect(JSON.parse(ran.stdout)).toEqual({ echoed: "x" });

    const failed = await project.run(["run", "echo", "--input", '{"msg":1}']);
    expect(failed.code).toBe(1);
    expect(jsonLines(failed.stderr)).toEqual([]);

    const tested = await project.run(["test"]);
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.stderr).toBe("");
    expect(jsonLines(tested.stdout)).toEqual([]);
  });

  it.each([
    ["with the logger plugin", true],
    ["without it", false],
  ])("dev logs one line per execution (%s)", async (_label, withLogger) => {
    if (!withLogger) project.tree.remove("plugins/logger");
    const server = project.start(["dev", "--port", "0"]);
    const [, url] = await server.waitForOutput(/listening\s+(http:\/\/[^\s]+) \(MCP at /);
    const response = await fetch(`${url}/api/skills/echo/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: { msg: "once" } }),
    });
    const execution = (await response.json()) as { id: string; status: string };
    expect(execution.status).toBe("success");
    // A second, different request: its line is printed after the first one's, so once it is
    // there the first execution has logged everything it is going to.
    await fetch(`${url}/health`);
    await fetch(`${url}/api/skills/echo/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: { msg: "twice" } }),
    });
    await server.waitForOutput(
      withLogger ? /skill execution.*\n.*skill execution/ : /executed.*\n.*executed/,
    );
    const stopped = await server.stop("SIGTERM");
    const afterListening = stopped.stdout.slice(stopped.stdout.indexOf("listening"));
    const executionLines = afterListening
      .split("\n")
      .filter((line) => /\becho\b/.test(line) && !/listening|stopping|stopped/.test(line));
    expect(executionLines).toHaveLength(2);
    if (withLogger) {
      expect(executionLines[0]).toMatch(/log\s+echo skill execution \{.*"status":"success"/);
      expect(executionLines.filter((line) => line.includes(execution.id))).toHaveLength(1);
    } else {
      expect(executionLines[0]).toMatch(/executed\s+echo@1\.0\.0 → success/);
    }
    expect(jsonLines(stopped.stderr)).toEqual([]);
  });
});
