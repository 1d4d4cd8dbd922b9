import { rmSync } from "node:fs";
import { join } from "node:path";
import { createSkillHost, openDatabase, type SkillHost } from "@skillbox/core";
import { installRecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { createTemporaryDirectory } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import { UNDO_SHARED_RECORD } from "./undo-shared-record.js";

const directories: string[] = [];
const hosts: SkillHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

describe("migrate to traced executions", () => {
  it("reads executions of a version-5 file with null trace ids and stores the ids of new ones", async () => {
    const directory = createTemporaryDirectory();
    directories.push(directory);
    const path = join(directory, "skillbox.db");
    const before = createSkillHost({ database: path, logger: quiet });
    before.registry.register({ name: "echo", version: "1.0.0", handler: "echo", apiKeyId: "public" });
    before.executor.registerHandler("echo", (input) => input);
    const old = await before.executor.execute("echo", { a: 1 });
    await before.close();
    // The file as schema version 5 left it: no trace columns (nor the shared record of version 7).
    const database = openDatabase({ path });
    database.exec(`
      ${UNDO_SHARED_RECORD}
          ALTER TABLE skill_executions DROP COLUMN trace_id;
      ALTER TABLE skill_executions DROP COLUMN span_id;
      PRAGMA user_version = 5;
    `);
    database.close();

    const telemetry = installRecordingTelemetry();
    try {
      const after = createSkillHost({ database: path, logger: quiet });
      hosts.push(after);
      expect(after.database.pragma("user_version", { simple: true })).toBeGreaterThanOrEqual(6);
      expect(await after.executor.getExecution(old.id)).toMatchObject({
        status: "success",
        traceId: null,
        spanId: null,
      });
      after.executor.registerHandler("echo", (input) => input);
      const traced = await after.executor.execute("echo", { b: 2 });
      const [span] = telemetry.named("execute_tool echo");
      expect(await after.executor.getExecution(traced.id)).toMatchObject({
        traceId: span!.spanContext().traceId,
        spanId: span!.spanContext().spanId,
      });
      expect((await after.executor.listExecutionSummaries({ limit: 1 }))[0]).toMatchObject({
        traceId: traced.traceId,
      });
    } finally {
      await telemetry.close();
    }
  });
});
