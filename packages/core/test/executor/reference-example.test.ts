import { existsSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  closeDefaultSkillHost,
  getDefaultSkillHost,
  type SkillExecutor,
  type SkillRegistry,
  skillExecutor,
  skillRegistry,
} from "@skillbox/core";
import {
  createTemporaryDirectory,
  createTemporaryHost,
  type TemporaryHost,
} from "@skillbox/test-helpers/temporary-host";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";

/**
 * The reference document's "Registering a Skill and Handler" and "Executing a Skill"
 * examples, verbatim except for the import path; the two instances are passed in, so the same
 * code runs on an isolated host and on the default `skillRegistry` / `skillExecutor`.
 */
async function referenceExample(skillRegistry: SkillRegistry, skillExecutor: SkillExecutor) {
  // Register metadata
  await skillRegistry.register({
    name: "echo",
    version: "1.0.0",
    description: "Returns the same payload back",
    schema: { input: { type: "object", properties: { msg: { type: "string" } } } },
    handler: "echoHandler",
    enabled: true,
    apiKeyId: "public",
  });

  // Register the actual handler function
  // biome-ignore lint/correctness/noUnusedFunctionParameters: verbatim from the reference example.
  skillExecutor.registerHandler("echoHandler", async (input, ctx) => {
    return { echoed: input.msg };
  });

  const result = await skillExecutor.execute(
    "echo@1.0.0",
    { msg: "hello world" },
    { apiKeyId: "user-123", sessionId: "sess-abc" },
  );

  console.log(result.output?.echoed); // → "hello world"
  return result;
}

describe("SkillExecutor", () => {
  let host: TemporaryHost | undefined;

  afterEach(async () => {
    vi.restoreAllMocks();
    await host?.dispose();
    host = undefined;
  });

  it("runs the reference's registry + executor example against an isolated host", async () => {
    host = createTemporaryHost();
    const { registry: skillRegistry, executor: skillExecutor } = host;
    const log = vi.spyOn(console, "log").mockImplementation(() => {});

    const result = await referenceExample(skillRegistry, skillExecutor);

    expect(log).toHaveBeenCalledWith("hello world");
    expect(result.status).toBe("success");
    expect(result.output).toEqual({ echoed: "hello world" });
    const stored = await skillExecutor.getExecution(result.id);
    expect(stored).toMatchObject({
      skillName: "echo",
      skillVersion: "1.0.0",
      apiKeyId: "user-123",
      sessionId: "sess-abc",
      input: { msg: "hello world" },
      output: { echoed: "hello world" },
      status: "success",
      attempts: 1,
    });
    expect(
      (await skillExecutor.listExecutions({ owner: "user-123" })).map((execution) => execution.id),
    ).toEqual([result.id]);
    expect(await skillExecutor.countExecutions({ skill: "echo" })).toBe(1);
    expect(skillRegistry.getSkill("echo@1.0.0")).toMatchObject({
      description: "Returns the same payload back",
      handler: "echoHandler",
      enabled: true,
      apiKeyId: "public",
    });
  });
});

describe("skillExecutor", () => {
  let directory: string;
  let databasePath: string;
  let previous: string | undefined;

  beforeAll(() => {
    directory = createTemporaryDirectory("skillbox-default-host-");
    databasePath = join(directory, "default.db");
    previous = process.env.SKILLBOX_DB;
    process.env.SKILLBOX_DB = databasePath;
  });

  afterAll(async () => {
    await closeDefaultSkillHost();
    if (previous === undefined) delete process.env.SKILLBOX_DB;
    else process.env.SKILLBOX_DB = previous;
    rmSync(directory, { recursive: true, force: true });
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("runs the reference's example on the default skillRegistry/skillExecutor over SKILLBOX_DB", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});

    const result = await referenceExample(skillRegistry, skillExecutor);

    expect(log).toHaveBeenCalledWith("hello world");
    expect(result.status).toBe("success");
    expect(result.output).toEqual({ echoed: "hello world" });

    // The default instances are one host over the SKILLBOX_DB file.
    const host = getDefaultSkillHost();
    expect(host.registry).toBe(getDefaultSkillHost().registry);
    expect(resolve(host.database.name)).toBe(resolve(databasePath));
    expect((await skillExecutor.getExecution(result.id))?.status).toBe("success");

    // The audit row is committed to that file: a separate connection sees it.
    await closeDefaultSkillHost();
    expect(existsSync(databasePath)).toBe(true);
    const reader = new Database(databasePath, { readonly: true });
    try {
      const row = reader
        .prepare(
          "SELECT skill_name, api_key_id, session_id, status, output FROM skill_executions WHERE id = ?",
        )
        .get(result.id) as Record<string, unknown> | undefined;
      expect(row).toEqual({
        skill_name: "echo",
        api_key_id: "user-123",
        session_id: "sess-abc",
        status: "success",
        output: JSON.stringify({ echoed: "hello world" }),
      });
    } finally {
      reader.close();
    }
  });

  it("reopens the default host on the same SKILLBOX_DB after closeDefaultSkillHost()", async () => {
    await closeDefaultSkillHost();
    const before = await skillExecutor.countExecutions({ owner: "user-123" });
    skillRegistry.register({
      name: "echo",
      version: "1.0.0",
      description: "Returns the same payload back",
      schema: { input: { type: "object", properties: { msg: { type: "string" } } } },
      handler: "echoHandler",
      enabled: true,
      apiKeyId: "public",
    });
    skillExecutor.registerHandler("echoHandler", async (input) => ({ echoed: input.msg }));
    const result = await skillExecutor.execute("echo", { msg: "again" }, { apiKeyId: "user-123" });
    expect(result.output?.echoed).toBe("again");
    expect(resolve(getDefaultSkillHost().database.name)).toBe(resolve(databasePath));
    expect(await skillExecutor.countExecutions({ owner: "user-123" })).toBe(before + 1);
  });
});
