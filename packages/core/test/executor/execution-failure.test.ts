import { deny, executionFailure, SkillboxError, type SkillExecution } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { registerSkill, useTemporaryHosts } from "./executor-test-bed.js";

const newHost = useTemporaryHosts();

describe("executionFailure", () => {
  it("is undefined for a success", async () => {
    const host = newHost();
    registerSkill(host, { name: "echo" });
    host.executor.registerHandler("echo", (input) => input);
    const execution = await host.executor.execute("echo", { said: "hi" });
    expect(execution.status).toBe("success");
    expect(executionFailure(execution)).toBeUndefined();
  });

  it("is the record's error, code, message and data, as a SkillboxError", async () => {
    const host = newHost();
    registerSkill(host, { name: "refuses" });
    host.executor.registerHandler("refuses", () => {
      throw new SkillboxError("QUOTA_EXHAUSTED", "refuses@1.0.0: no quota left", { data: { left: 0 } });
    });
    const execution = await host.executor.execute("refuses", {}, { maxRetries: 0 });
    const failure = executionFailure(execution);
    expect(failure).toBeInstanceOf(SkillboxError);
    expect(failure?.toJSON()).toEqual({
      code: "QUOTA_EXHAUSTED",
      message: "refuses@1.0.0: no quota left",
      data: { left: 0 },
    });
    expect(failure?.toJSON()).toEqual(execution.error);
  });

  it("is the denial of a denied execution and the timeout of a timed-out one", async () => {
    const host = newHost();
    registerSkill(host, { name: "guarded" });
    registerSkill(host, { name: "slow", timeoutMs: 20 });
    host.executor.registerHandler("guarded", () => "never");
    host.executor.registerHandler(
      "slow",
      (_input, context) => new Promise((resolve) => context.signal.addEventListener("abort", resolve)),
    );
    host.executor.use({
      name: "guard",
      match: { names: "guarded" },
      before() {
        throw deny("guarded is closed today");
      },
    });
    const denied = await host.executor.execute("guarded", {});
    expect(denied.status).toBe("denied");
    expect(executionFailure(denied)).toMatchObject({ code: "DENIED", message: "guarded is closed today" });
    const timedOut = await host.executor.execute("slow", {}, { maxRetries: 0 });
    expect(timedOut.status).toBe("timeout");
    expect(executionFailure(timedOut)?.code).toBe("TIMEOUT");
  });
});

describe("a failed row read back", () => {
  it("carries an error with the code its status stands for when its writer stored none", async () => {
    const host = newHost();
    registerSkill(host, { name: "broken" });
    host.executor.registerHandler("broken", () => {
      throw new Error("boom");
    });
    const codes: Record<string, string> = {};
    for (const status of ["error", "timeout", "cancelled", "denied", "interrupted"] as const) {
      const { id } = await host.executor.execute("broken", {}, { maxRetries: 0 });
      // Another writer (an old tool, a hand-made fix) leaves a failed row without its error.
      host.database
        .prepare(
          "UPDATE skill_executions SET status = ?, error_code = NULL, error_message = NULL, error_data = NULL WHERE id = ?",
        )
        .run(status, id);
      const stored = (await host.executor.getExecution(id)) as SkillExecution;
      expect(stored.status).toBe(status);
      expect(stored.error?.message).toBe(`broken@1.0.0 ended ${status}`);
      codes[status] = stored.error?.code ?? "none";
      expect(executionFailure(stored)?.code).toBe(codes[status]);
    }
    expect(codes).toEqual({
      error: "HANDLER_ERROR",
      timeout: "TIMEOUT",
      cancelled: "CANCELLED",
      denied: "DENIED",
      interrupted: "INTERRUPTED",
    });
  });

  it("keeps no error on a success", async () => {
    const host = newHost();
    registerSkill(host, { name: "echo" });
    host.executor.registerHandler("echo", () => ({ ok: true }));
    const { id } = await host.executor.execute("echo", {});
    const stored = await host.executor.getExecution(id);
    expect(stored?.status).toBe("success");
    expect(stored?.error).toBeNull();
    expect(stored?.output).toEqual({ ok: true });
  });
});
