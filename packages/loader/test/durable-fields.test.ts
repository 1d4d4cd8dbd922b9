import { type LoadSkillsResult, loadSkills } from "@skillbox/loader";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { skillFolder } from "./loader-fixtures.js";

let tree: TemporaryTree;
let host: TemporaryHost;
const results: LoadSkillsResult[] = [];

beforeEach(() => {
  tree = createTemporaryTree();
  tree.mkdir("plugins");
  host = createTemporaryHost();
});

afterEach(async () => {
  for (const result of results.splice(0)) result.loader.close();
  await host.dispose();
  tree.cleanup();
});

async function load(): Promise<LoadSkillsResult> {
  const result = await loadSkills({
    dirs: [tree.path("plugins")],
    npm: false,
    registry: host.registry,
    executor: host.executor,
  });
  results.push(result);
  return result;
}

describe("durable-execution manifest fields", () => {
  it("registers approval, approvalTimeoutMs, concurrency and idempotent from skill.json", async () => {
    tree.writeFolder(
      "plugins/transfer",
      skillFolder("sent", {
        name: "transfer",
        approval: "required",
        approvalTimeoutMs: 60_000,
        concurrency: 2,
        idempotent: true,
      }),
    );
    await load();
    expect(host.registry.getSkill("transfer")).toMatchObject({
      approval: "required",
      approvalTimeoutMs: 60_000,
      concurrency: 2,
      idempotent: true,
    });
    const paused = await host.executor.execute("transfer", { msg: "hi" });
    expect(paused.status).toBe("awaiting_approval");
  });

  it("leaves a manifest without them as before: no field, so its content hash does not change", async () => {
    tree.writeFolder("plugins/echo", skillFolder("plain", { name: "echo" }));
    await load();
    const skill = host.registry.getSkill("echo");
    expect(skill).toBeDefined();
    for (const field of ["approval", "approvalTimeoutMs", "concurrency", "idempotent"]) {
      expect(skill).not.toHaveProperty(field);
    }
  });

  it("refuses a malformed field, naming it", async () => {
    tree.writeFolder("plugins/bad", skillFolder("x", { name: "bad", approval: "always", concurrency: 0 }));
    const result = await load();
    const message = result.failed.map((failure) => failure.message).join("\n");
    expect(message).toContain("`approval`");
    expect(message).toContain("`concurrency`");
    expect(host.registry.getSkill("bad")).toBeUndefined();
  });

  it("asks the defineSkill approval predicate of a worker skill inside its thread", async () => {
    tree.writeFolder("plugins/spend", {
      "skill.json": { name: "spend", version: "1.0.0", handler: "./index.ts", runtime: "worker" },
      "index.ts": [
        'import { defineSkill } from "@skillbox/core";',
        "export default defineSkill({",
        '  approval: (input: { amount: number }) => (input.amount > 50 ? "spending " + input.amount : false),',
        "  handler: (input: { amount: number }, ctx) => ({ spent: input.amount, approvedBy: ctx.approval?.decidedBy ?? null }),",
        "});",
      ].join("\n"),
    });
    await load();
    expect(await host.executor.execute("spend", { amount: 5 })).toMatchObject({
      status: "success",
      output: { spent: 5, approvedBy: null },
    });
    const paused = await host.executor.execute("spend", { amount: 80 });
    expect(paused).toMatchObject({ status: "awaiting_approval", approval: { reason: "spending 80" } });
    await host.executor.approve(paused.id, { by: "frank" });
    expect(await host.executor.wait(paused.id, { timeoutMs: 20_000 })).toMatchObject({
      status: "success",
      output: { spent: 80, approvedBy: "frank" },
    });
  });
});
