import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { hasPodman } from "@skillbox/test-helpers/engine-availability";
import { createTemporaryDirectory } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repositoryRoot = resolve(import.meta.dirname, "../..");
const examplesRoot = join(repositoryRoot, "examples");
const examples = readdirSync(examplesRoot, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

function scriptsOf(example: string): Record<string, string> {
  const manifest = JSON.parse(readFileSync(join(examplesRoot, example, "package.json"), "utf8")) as {
    scripts?: Record<string, string>;
  };
  return manifest.scripts ?? {};
}

/**
 * Runs `pnpm <script> <args>` in the example's folder, as its README says, on a fresh database.
 * Through pnpm, so that the command tested is the one in package.json, not a copy of it.
 */
async function runScript(example: string, directory: string, script: string, args: string[] = []) {
  const { stdout } = await run("pnpm", ["--silent", script, ...args], {
    cwd: join(examplesRoot, example),
    env: { ...process.env, SKILLBOX_DB: join(directory, `${example}.db`) },
    timeout: 60_000,
  });
  return stdout;
}

describe("examples (each as its README says to run it, on a fresh database)", () => {
  let directory: string | undefined;

  afterEach(() => {
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
    directory = undefined;
  });

  it.each(examples)("examples/%s has a README saying what it shows and how to run it", (example) => {
    const readme = join(examplesRoot, example, "README.md");
    expect(existsSync(readme), `examples/${example}/README.md is missing`).toBe(true);
    const text = readFileSync(readme, "utf8");
    expect(text).toMatch(/^# /);
    expect(text).toMatch(/pnpm (start|test)/);
  });

  it.each(examples)("examples/%s has a `test` script that runs its own checks", (example) => {
    const test = scriptsOf(example).test;
    expect(test, `examples/${example}/package.json has no "test" script`).toBeDefined();
    expect(test).toMatch(/^vitest run --root \.\.\/\.\. /);
    expect(test).toContain(`examples/${example}`);
  });

  it("examples/skills-host: `pnpm start --once` serves the repository's plugins and answers the echo demo", async () => {
    directory = createTemporaryDirectory("skillbox-host-");
    const stdout = await runScript("skills-host", directory, "start", ["--once"]);
    expect(stdout).toContain("loaded    skill echo@1.0.0");
    expect(stdout).toMatch(/loaded {4}interceptor logger@/);
    expect(stdout).toContain('echo says {"echoed":"hello from the skills host"}');
    expect(stdout).toContain("stopped");
    expect(stdout).not.toContain("failed ");
    expect(stdout).not.toContain("FOLDER_NOT_FOUND");
  });

  it("examples/skills-host warns about a folder that does not exist instead of serving nothing silently", async () => {
    directory = createTemporaryDirectory("skillbox-host-");
    const { stdout } = await run(process.execPath, ["main.mjs", "./no-such-folder", "--once"], {
      cwd: join(examplesRoot, "skills-host"),
      env: { ...process.env, SKILLBOX_DB: join(directory, "host.db") },
      timeout: 60_000,
    });
    expect(stdout).toMatch(
      /warning {3}FOLDER_NOT_FOUND: no-such-folder: no such folder; it provides no skills \(create it/,
    );
    expect(stdout).toContain("serving   0 skill version(s)");
  });

  it("examples/quick-start: `pnpm start` registers echo, runs it and prints the audit trail", async () => {
    directory = createTemporaryDirectory("skillbox-quick-start-");
    const stdout = await runScript("quick-start", directory, "start");
    expect(stdout).toContain("output: hello world");
    expect(stdout).toContain("invalid input → status error, INPUT_INVALID");
    expect(stdout).toContain("executions recorded for user-123 so far: 2");
  });

  it.runIf(hasPodman() || process.env.CI)(
    "examples/container-skill: `pnpm start` runs a TypeScript handler and a command in containers",
    async () => {
      directory = createTemporaryDirectory("skillbox-container-skill-");
      const stdout = await runScript("container-skill", directory, "start");
      expect(stdout).toContain("sandbox provider: podman");
      expect(stdout).toContain('word-count → success {"words":4,"ranAs":65534}');
      expect(stdout).toContain('shout → success {"shouted":"HELLO FROM A CONTAINER"}');
      expect(stdout).toMatch(/word-count \(warm\) → success \{"words":3,"ranAs":65534\} in \d+ ms/);
    },
  );
});
