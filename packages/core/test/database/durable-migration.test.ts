import { rmSync } from "node:fs";
import { join } from "node:path";
import { createSkillHost, openDatabase, type SkillHost } from "@skillbox/core";
import { createTemporaryDirectory } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import { UNDO_DURABLE_EXECUTIONS } from "./undo-durable-executions.js";

const directories: string[] = [];
const hosts: SkillHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

describe("migrate to durable executions", () => {
  it("keeps a file of the previous version readable: its skills and executions gain nothing but empty fields", async () => {
    const directory = createTemporaryDirectory();
    directories.push(directory);
    const path = join(directory, "skillbox.db");
    // A file as schema version 4 left it, holding one skill and one finished execution.
    const before = createSkillHost({ database: path, logger: quiet });
    before.registry.register({ name: "echo", version: "1.0.0", handler: "echo", apiKeyId: "public" });
    before.executor.registerHandler("echo", (input) => input);
    const done = await before.executor.execute("echo", { a: 1 });
    await before.close();
    const database = openDatabase({ path });
    database.exec(`${UNDO_DURABLE_EXECUTIONS}\nPRAGMA user_version = 4;`);
    database.close();

    const after = createSkillHost({ database: path, logger: quiet });
    hosts.push(after);
    expect(after.database.pragma("user_version", { simple: true })).toBeGreaterThanOrEqual(5);
    const skill = after.registry.getSkill("echo");
    expect(skill).toBeDefined();
    expect(skill).not.toHaveProperty("approval");
    expect(skill).not.toHaveProperty("idempotent");
    const record = await after.executor.getExecution(done.id);
    expect(record).toMatchObject({ status: "success", output: { a: 1 }, progress: null, approval: null });
    after.executor.registerHandler("echo", (input) => input);
    const id = await after.executor.submit("echo", { b: 2 });
    expect(await after.executor.wait(id)).toMatchObject({ status: "success", output: { b: 2 } });
  });
});
