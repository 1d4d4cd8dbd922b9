import { existsSync } from "node:fs";
import { type CliProject, createCliProject } from "@skillbox/test-helpers/cli-process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { echoFolder } from "./cli-fixtures.js";

let project: CliProject;

beforeEach(() => {
  project = createCliProject();
});

afterEach(async () => {
  await project.cleanup();
});

describe("skillbox.config.ts", { timeout: 60_000 }, () => {
  it("is picked up from the working directory: folders, database and owner", async () => {
    project.tree.writeFolder("skills/echo", echoFolder());
    project.tree.write(
      "skillbox.config.ts",
      `import { defineConfig } from "skillbox";\n\nexport default defineConfig({\n  dirs: ["./skills"],\n  database: "./data/from-config.db",\n  owner: "acme",\n  npm: false,\n});\n`,
    );
    // SKILLBOX_DB would win over the file's database: leave it out.
    const listed = await project.run(["list", "--json"], { env: { SKILLBOX_DB: undefined } });
    expect(listed.stderr).toBe("");
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ name: "echo", apiKeyId: "acme" })]);
    expect(existsSync(project.tree.path("data/from-config.db"))).toBe(true);

    const ran = await project.run(["run", "echo", "--input", '{"msg":"x"}', "--json"], {
      env: { SKILLBOX_DB: undefined },
    });
    expect(JSON.parse(ran.stdout)).toMatchObject({ apiKeyId: "acme", status: "success" });
  });

  it("is overridden by --db and SKILLBOX_DB, and replaced by --config", async () => {
    project.tree.writeFolder("skills/echo", echoFolder());
    project.tree.write(
      "skillbox.config.mjs",
      'export default { dirs: ["./nothing-here"], database: "./data/a.db" };\n',
    );
    project.tree.write("other.config.mjs", 'export default { dirs: ["./skills"] };\n');
    const fromFlag = await project.run(["list", "--json", "--db", "flag.db"]);
    expect(JSON.parse(fromFlag.stdout)).toEqual([]);
    expect(existsSync(project.tree.path("flag.db"))).toBe(true);
    expect(existsSync(project.tree.path("data/a.db"))).toBe(false);

    const other = await project.run(["list", "--json", "--config", "other.config.mjs"]);
    expect(JSON.parse(other.stdout).map((skill: { name: string }) => skill.name)).toEqual(["echo"]);
    expect(existsSync(project.databasePath)).toBe(true);
  });

  it("errors name the file and the field", async () => {
    project.tree.write(
      "skillbox.config.mjs",
      'export default { dirs: "plugins", server: { port: 99999, hots: "0.0.0.0" }, sandbox: { runtime: "vmware" } };\n',
    );
    const result = await project.run(["list"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^error CONFIG_INVALID: skillbox\.config\.mjs: `dirs` must be a list of folders/,
    );
    expect(result.stderr).toContain("skillbox.config.mjs: `server.port` must be at most 65535");
    expect(result.stderr).toContain("skillbox.config.mjs: unknown field `server.hots`");
    expect(result.stderr).toContain(
      'skillbox.config.mjs: `sandbox.runtime` must be a sandbox provider such as "podman"',
    );

    const missing = await project.run(["list", "--config", "nope.ts"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error CONFIG_NOT_FOUND: nope\.ts: no such config file/);
  });

  it("caps every attempt at executor.maxAttemptTimeoutMs, or SKILLBOX_MAX_ATTEMPT_TIMEOUT_MS over it", async () => {
    project.tree.writeFolder("plugins/hang", {
      "skill.json": { name: "hang", version: "1.0.0", handler: "./index.mjs", timeoutMs: 3_600_000 },
      "index.mjs": "export default () => new Promise(() => {});\n",
    });
    project.tree.write("skillbox.config.mjs", "export default { executor: { maxAttemptTimeoutMs: 400 } };\n");
    const fromFile = await project.run(["run", "hang", "--timeout", "3600000"]);
    expect(fromFile.code).toBe(1);
    expect(fromFile.stderr).toContain(
      "error TIMEOUT: hang@1.0.0 attempt 1 timed out after 400 ms (the host's maxAttemptTimeoutMs)",
    );
    const fromEnvironment = await project.run(["run", "hang"], {
      env: { SKILLBOX_MAX_ATTEMPT_TIMEOUT_MS: "300" },
    });
    expect(fromEnvironment.stderr).toContain("timed out after 300 ms (the host's maxAttemptTimeoutMs)");

    project.tree.write("skillbox.config.mjs", "export default { executor: { maxAttemptTimeoutMs: -1 } };\n");
    const invalid = await project.run(["list"]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain(
      "skillbox.config.mjs: `executor.maxAttemptTimeoutMs` must be a positive number of milliseconds",
    );
  });

  it("sets the approval timeout and the background queue from executor, naming a bad field", async () => {
    project.tree.writeFolder("plugins/guarded", {
      "skill.json": { name: "guarded", version: "1.0.0", handler: "./index.mjs", approval: "required" },
      "index.mjs": "export default () => 'ran';\n",
    });
    project.tree.write(
      "skillbox.config.mjs",
      "export default { executor: { approvalTimeoutMs: 60000, queue: { concurrency: 2 } } };\n",
    );
    const paused = await project.run(["run", "guarded", "--json"]);
    expect(paused.code).toBe(3);
    const record = JSON.parse(paused.stdout) as { approval: { requestedAt: string; expiresAt: string } };
    expect(Date.parse(record.approval.expiresAt) - Date.parse(record.approval.requestedAt)).toBe(60_000);

    project.tree.write(
      "skillbox.config.mjs",
      "export default { executor: { approvalTimeoutMs: -5, queue: { concurrency: 0, size: 3 } } };\n",
    );
    const invalid = await project.run(["list"]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain(
      "`executor.approvalTimeoutMs` must be a positive number of milliseconds",
    );
    expect(invalid.stderr).toContain("`executor.queue.concurrency` must be at least 1 execution");
    expect(invalid.stderr).toContain("unknown field `executor.queue.size`");
  });
});
