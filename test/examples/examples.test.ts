import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { hasPodman } from "../../packages/sandbox/test/engine-availability.js";
import { createTemporaryDirectory } from "../helpers/temporary-host.js";

const run = promisify(execFile);
const repositoryRoot = resolve(import.meta.dirname, "../..");

describe("examples (run as a user would, on a fresh database)", () => {
  let directory: string | undefined;

  afterEach(() => {
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
    directory = undefined;
  });

  it("serves the repository's plugins over a fresh database and answers the echo demo", async () => {
    directory = createTemporaryDirectory("skillbox-host-");
    const { stdout } = await run(process.execPath, ["examples/skills-host/main.mjs", "--once"], {
      cwd: repositoryRoot,
      env: { ...process.env, SKILLBOX_DB: join(directory, "host.db") },
      timeout: 60_000,
    });
    expect(stdout).toContain("loaded    skill echo@1.0.0");
    expect(stdout).toMatch(/loaded {4}interceptor logger@/);
    expect(stdout).toContain('echo says {"echoed":"hello from the skills host"}');
    expect(stdout).toContain("stopped");
    expect(stdout).not.toContain("failed ");
  });

  it("examples/quick-start registers echo, runs it and prints the audit trail", async () => {
    directory = createTemporaryDirectory("skillbox-quick-start-");
    const { stdout } = await run(process.execPath, ["examples/quick-start/main.mjs"], {
      cwd: repositoryRoot,
      env: { ...process.env, SKILLBOX_DB: join(directory, "quick-start.db") },
      timeout: 60_000,
    });
    expect(stdout).toContain("output: hello world");
    expect(stdout).toContain("invalid input → status error, INPUT_INVALID");
    expect(stdout).toContain("executions recorded for user-123 so far: 2");
  });

  it.runIf(hasPodman() || process.env.CI)(
    "examples/container-skill runs a TypeScript handler and a command in containers",
    async () => {
      directory = createTemporaryDirectory("skillbox-container-skill-");
      const { stdout } = await run(process.execPath, ["examples/container-skill/main.mjs"], {
        cwd: repositoryRoot,
        env: { ...process.env, SKILLBOX_DB: join(directory, "container.db") },
        timeout: 60_000,
      });
      expect(stdout).toContain("sandbox provider: podman");
      expect(stdout).toContain('word-count → success {"words":4,"ranAs":65534}');
      expect(stdout).toContain('shout → success {"shouted":"HELLO FROM A CONTAINER"}');
      expect(stdout).toMatch(/word-count \(warm\) → success \{"words":3,"ranAs":65534\} in \d+ ms/);
    },
  );
});
