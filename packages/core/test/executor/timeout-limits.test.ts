import { type SkillboxError, SkillExecutor } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { registerSkill as register, useTemporaryHosts } from "./executor-test-bed.js";

const newHost = useTemporaryHosts();

/** A handler that ignores nothing: it settles only when its signal aborts, and reports why. */
function waitForAbort(seen: SkillboxError[]) {
  return (_input: unknown, context: { signal: AbortSignal }) =>
    new Promise<never>((_resolve, reject) => {
      context.signal.addEventListener("abort", () => {
        seen.push(context.signal.reason as SkillboxError);
        reject(context.signal.reason);
      });
    });
}

// A caller must not be able to pin the host longer than the skill (and the operator) allow: these
// tests would wait a minute without the limits, and fail on the test timeout.
describe("SkillExecutor timeout limits", () => {
  it("ignores a caller's timeoutMs larger than the skill's: the handler is aborted at the skill's timeout", async () => {
    const host = newHost();
    register(host, { name: "five-seconds", timeoutMs: 200 });
    const seen: SkillboxError[] = [];
    host.executor.registerHandler("five-seconds", waitForAbort(seen));
    const execution = await host.executor.execute("five-seconds", {}, { timeoutMs: 60_000 });
    expect(execution.status).toBe("timeout");
    expect(execution.error?.code).toBe("TIMEOUT");
    expect(execution.error?.message).toBe(
      "five-seconds@1.0.0 attempt 1 timed out after 200 ms (the skill's timeoutMs)",
    );
    expect(seen.map((reason) => reason.code)).toEqual(["TIMEOUT"]);
    expect((await host.executor.getExecution(execution.id))?.error?.message).toContain(
      "200 ms (the skill's timeoutMs)",
    );
  }, 10_000);

  it("still lets a caller lower the skill's timeout", async () => {
    const host = newHost();
    register(host, { name: "patient", timeoutMs: 60_000 });
    const seen: SkillboxError[] = [];
    host.executor.registerHandler("patient", waitForAbort(seen));
    const execution = await host.executor.execute("patient", {}, { timeoutMs: 100 });
    expect(execution.error?.message).toBe(
      "patient@1.0.0 attempt 1 timed out after 100 ms (the call's timeoutMs)",
    );
    expect(seen).toHaveLength(1);
  }, 10_000);

  it("caps a skill's own timeoutMs, and the executor's default, at maxAttemptTimeoutMs", async () => {
    const host = newHost({ maxAttemptTimeoutMs: 150, defaultTimeoutMs: 60_000 });
    register(host, { name: "own-limit", timeoutMs: 60_000 });
    register(host, { name: "default-limit" });
    const seen: SkillboxError[] = [];
    host.executor.registerHandler("own-limit", waitForAbort(seen));
    host.executor.registerHandler("default-limit", waitForAbort(seen));
    for (const name of ["own-limit", "default-limit"]) {
      const execution = await host.executor.execute(name, {}, { timeoutMs: 120_000 });
      expect(execution.status).toBe("timeout");
      expect(execution.error?.message).toBe(
        `${name}@1.0.0 attempt 1 timed out after 150 ms (the host's maxAttemptTimeoutMs)`,
      );
    }
    expect(seen.map((reason) => reason.code)).toEqual(["TIMEOUT", "TIMEOUT"]);
  }, 10_000);

  it("lets a caller lower, never raise, the executor's defaultTotalTimeoutMs", async () => {
    const host = newHost({ defaultTotalTimeoutMs: 150 });
    register(host, { name: "hang", timeoutMs: 60_000 });
    const seen: SkillboxError[] = [];
    host.executor.registerHandler("hang", waitForAbort(seen));
    const raised = await host.executor.execute("hang", {}, { totalTimeoutMs: 60_000 });
    expect(raised.status).toBe("timeout");
    expect(raised.error?.message).toBe("hang@1.0.0 ran past its overall deadline of 150 ms");
    const lowered = await host.executor.execute("hang", {}, { totalTimeoutMs: 80 });
    expect(lowered.error?.message).toBe("hang@1.0.0 ran past its overall deadline of 80 ms");
  }, 10_000);

  it("refuses a limit that is not a positive number of milliseconds with CONFIG_INVALID naming it", () => {
    const host = newHost();
    for (const value of [0, -5, Number.NaN]) {
      expect(() => new SkillExecutor({ registry: host.registry, maxAttemptTimeoutMs: value })).toThrow(
        expect.objectContaining({
          code: "CONFIG_INVALID",
          message: expect.stringContaining("`maxAttemptTimeoutMs` must be a positive number of milliseconds"),
        }),
      );
    }
  });
});
