import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { describeResult, type ProcessResult } from "./child-processes.js";
import { expectSuccess, printedJson } from "./cli-expectations.js";
import type { InstalledProject } from "./installed-project.js";
import { parseNextCommands } from "./next-commands.js";

/** What a scaffold printed: its output, and the `skillbox` commands of its `next:` line (words after `skillbox`). */
interface Scaffolded {
  result: ProcessResult;
  next: string[][];
}

/** The `skillbox` commands of a scaffold's `next:` line, as words after `skillbox`; fails on any other command. */
export function nextSkillboxCommands(result: ProcessResult): string[][] {
  const commands = parseNextCommands(result.stdout);
  const others = commands.filter((words) => words[0] !== "skillbox");
  expect(others, `the next: line suggests commands other than skillbox\n${describeResult(result)}`).toEqual(
    [],
  );
  return commands.map((words) => words.slice(1));
}

/** The suggested `skillbox <subcommand> …`, or undefined. */
function suggested(scaffolded: Scaffolded, subcommand: string): string[] | undefined {
  return scaffolded.next.find((words) => words[0] === subcommand);
}

/**
 * `skillbox new hello --dir skills` in the installed project, then what it suggests on its
 * `next:` line (test, dev), plus validate and run, as a new user would go.
 */
export function describeScaffoldSteps(installed: () => InstalledProject): void {
  describe("skillbox new hello --dir skills, then what it prints next", () => {
    let scaffolded: Scaffolded | undefined;

    /** The scaffold's output; the steps after it need it, and fail with its output when it did not run. */
    function scaffold(): Scaffolded {
      if (scaffolded === undefined) throw new Error("`skillbox new hello --dir skills` did not run");
      return scaffolded;
    }

    it("scaffolds the skill and names a skillbox test command to run next", async () => {
      const result = await installed().cli(["new", "hello", "--dir", "skills"]);
      expectSuccess(result);
      scaffolded = { result, next: nextSkillboxCommands(result) };
      expect(existsSync(installed().path("skills/hello/skill.json")), describeResult(result)).toBe(true);
      expect(existsSync(installed().path("skills/hello/index.ts")), describeResult(result)).toBe(true);
      expect(suggested(scaffolded, "test"), describeResult(result)).toBeDefined();
      // The host provides @skillbox/core: telling the user to install it is wrong advice.
      expect(result.stdout + result.stderr).not.toContain("npm install @skillbox/core");
    });

    it("writes a package.json with a typecheck script, a tsconfig.json and a .gitignore for .skillbox/", () => {
      const { result } = scaffold();
      const packageFile = installed().path("skills/hello/package.json");
      expect(existsSync(packageFile), describeResult(result)).toBe(true);
      const manifest = JSON.parse(readFileSync(packageFile, "utf8")) as {
        scripts?: Record<string, string>;
        peerDependencies?: Record<string, string>;
      };
      expect(manifest.scripts?.typecheck, "package.json scripts.typecheck").toBeDefined();
      expect(manifest.peerDependencies?.["@skillbox/core"], "package.json peerDependencies").toBeDefined();
      expect(existsSync(installed().path("skills/hello/tsconfig.json")), "skills/hello/tsconfig.json").toBe(
        true,
      );
      const ignores = ["skills/hello/.gitignore", ".gitignore"]
        .map((file) => installed().path(file))
        .filter((file) => existsSync(file))
        .map((file) => readFileSync(file, "utf8"));
      expect(ignores.join("\n"), "a .gitignore (skill folder or project) naming .skillbox/").toMatch(
        /^\/?\.skillbox\/?$/m,
      );
    });

    it("validate skills: the manifest and the handler check out", async () => {
      scaffold();
      const result = await installed().cli(["validate", "skills"]);
      expectSuccess(result);
      expect(result.stdout).toContain("✓ skill hello@0.1.0");
      expect(result.stdout).toContain("1 package(s) checked: 1 ok, 0 with problems");
    });

    it("the suggested skillbox test passes both examples", async () => {
      const test = suggested(scaffold(), "test")!;
      const result = await installed().cli(test);
      expectSuccess(result);
      expect(result.stdout).toContain("hello@0.1.0");
      expect(result.stdout).toContain("2 passed, 0 failed");
    });

    it("skillbox run (as suggested, else the test command's form) prints the output", async () => {
      const current = scaffold();
      const run = suggested(current, "run") ?? [
        "run",
        ...suggested(current, "test")!.slice(1),
        "--input",
        '{"name":"Ada"}',
      ];
      const result = await installed().cli(run);
      expectSuccess(result);
      expect(printedJson(result)).toEqual({ message: "Hello, Ada!" });
    });

    it("skillbox dev serves it: POST /api/skills/hello/execute answers, SIGTERM stops it", async () => {
      const dev = suggested(scaffold(), "dev") ?? ["dev", "skills"];
      const server = installed().startCli([...dev, "--port", "0", "--host", "127.0.0.1"]);
      try {
        const [, url] = await server.waitForOutput(/listening\s+(http:\/\/127\.0\.0\.1:\d+)/);
        const response = await fetch(`${url}/api/skills/hello/execute`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ input: { name: "Grace" } }),
        });
        const body = (await response.json()) as { status?: string; output?: unknown };
        const context = `${response.status} ${JSON.stringify(body)}\ndev stdout:\n${server.stdout()}\ndev stderr:\n${server.stderr()}`;
        expect(response.status, context).toBe(200);
        expect(body, context).toMatchObject({ status: "success", output: { message: "Hello, Grace!" } });
      } finally {
        await server.stop("SIGTERM");
      }
      // Stopped by its handle: it must end by itself, cleanly, saying so.
      const stopped = await server.finished();
      expect(stopped.signal, describeResult(stopped)).toBeNull();
      expect(stopped.code, describeResult(stopped)).toBe(0);
      expect(stopped.stdout).toContain("stopped");
    });
  });
}
