import { createSkillHost } from "@skillbox/core";
import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { describe, expect, it } from "vitest";
import { deferred, registerSkill as register, useTemporaryHosts } from "./executor-test-bed.js";

const newHost = useTemporaryHosts();

/** Reads the committed row through a second host on the same file, as the next start would. */
async function storedRow(host: TemporaryHost, id: string) {
  const reader = createSkillHost({
    database: host.databasePath,
    recoverInterrupted: false,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  try {
    return await reader.executor.getExecution(id);
  } finally {
    void reader.close();
  }
}

describe("SkillExecutor.close", () => {
  it("cancels an execution still running when the grace period ends, recording it cancelled before close resolves", async () => {
    const host = newHost();
    register(host, { name: "hang", timeoutMs: 3_600_000 });
    const started = deferred();
    // Ignores its signal on purpose: the shutdown must not depend on the handler's cooperation.
    host.executor.registerHandler("hang", () => {
      started.resolve();
      return new Promise<never>(() => {});
    });
    const running = host.executor.execute("hang", {}, { idempotencyKey: "pinned" });
    await started.promise;
    await host.executor.close({ graceMs: 100 });
    const execution = await running;
    expect(execution.status).toBe("cancelled");
    expect(execution.error?.code).toBe("CANCELLED");
    expect(execution.error?.message).toBe(
      "hang@1.0.0 was cancelled because the host shut down: it was still running when the 100 ms shutdown grace period ran out",
    );
    expect(await storedRow(host, execution.id)).toMatchObject({
      status: "cancelled",
      error: { code: "CANCELLED" },
    });
  }, 10_000);

  it("lets executions that finish within the grace period succeed, nested calls included", async () => {
    const host = newHost();
    register(host, { name: "parent" });
    register(host, { name: "child" });
    const started = deferred();
    const release = deferred();
    host.executor.registerHandler("parent", async (_input, context) => {
      started.resolve();
      await release.promise;
      return { child: await context.call("child", {}) };
    });
    host.executor.registerHandler("child", () => "from the child");
    const running = host.executor.execute("parent", {});
    await started.promise;
    const closing = host.executor.close({ graceMs: 20_000 });
    release.resolve();
    await closing;
    const execution = await running;
    expect(execution.status).toBe("success");
    expect(execution.output).toEqual({ child: "from the child" });
    await expect(host.executor.execute("child", {})).rejects.toMatchObject({ code: "BUSY" });
  });

  it("bounds by the grace period a nested call started while draining that its parent did not wait for", async () => {
    const host = newHost();
    register(host, { name: "parent" });
    register(host, { name: "child", timeoutMs: 3_600_000 });
    const started = deferred();
    const release = deferred();
    const childStarted = deferred();
    let child: Promise<unknown> | undefined;
    host.executor.registerHandler("parent", async (_input, context) => {
      started.resolve();
      await release.promise;
      // Fire and forget: the parent ends while its child still runs.
      child = context.call("child", {}).catch((error: unknown) => error);
      return "parent done";
    });
    host.executor.registerHandler("child", () => {
      childStarted.resolve();
      return new Promise<never>(() => {});
    });
    const running = host.executor.execute("parent", {});
    await started.promise;
    const closing = host.executor.close({ graceMs: 200 });
    release.resolve();
    expect((await running).status).toBe("success");
    await childStarted.promise;
    const closed = await Promise.race([
      closing.then(() => "closed"),
      new Promise((resolve) => setTimeout(resolve, 5_000, "still draining")),
    ]);
    expect(closed).toBe("closed");
    expect(await child).toMatchObject({ code: "CANCELLED" });
    const [childRow] = await host.executor.listExecutions({ skill: "child" });
    expect(childRow).toMatchObject({ status: "cancelled", error: { code: "CANCELLED" } });
  }, 10_000);

  it("refuses a negative graceMs with CONFIG_INVALID and stays closable", async () => {
    const host = newHost();
    await expect(host.executor.close({ graceMs: -1 })).rejects.toMatchObject({
      code: "CONFIG_INVALID",
      message: expect.stringContaining("`graceMs` must be 0 or a positive number of milliseconds"),
    });
    await host.executor.close({ graceMs: 0 });
  });

  it("returns the same promise when called again", async () => {
    const host = newHost();
    const first = host.executor.close({ graceMs: 0 });
    expect(host.executor.close()).toBe(first);
    await first;
  });
});

describe("SkillExecutor.onClose", () => {
  it("runs handlers registered through ctx.hostLifecycle once, after the last execution, newest first", async () => {
    const host = newHost();
    register(host, { name: "uses-pool" });
    const events: string[] = [];
    const releasePool = () => {
      events.push("pool released");
    };
    host.executor.registerHandler("uses-pool", (_input, context) => {
      // Registered on every execution, as a shared resource's first use would; runs once.
      context.hostLifecycle?.onClose(releasePool);
      events.push("executed");
      return "ok";
    });
    host.onClose(() => {
      events.push("host handler");
    });
    for (let run = 0; run < 3; run += 1) await host.executor.execute("uses-pool", {});
    host.onClose(() => {
      throw new Error("a broken handler is logged, not thrown");
    });
    const unregistered = host.onClose(() => {
      events.push("unregistered");
    });
    unregistered();
    await host.close();
    expect(events).toEqual(["executed", "executed", "executed", "pool released", "host handler"]);
  });

  it("runs a handler registered after the host closed at once", async () => {
    const host = newHost();
    await host.close();
    const ran = deferred();
    host.onClose(ran.resolve);
    await ran.promise;
  });

  it("hands handlers a lifecycle that is stable per host and distinct between hosts", async () => {
    const first = newHost();
    const second = newHost();
    for (const host of [first, second]) {
      register(host, { name: "lifecycle" });
      host.executor.registerHandler("lifecycle", (_input, context) => context.hostLifecycle);
    }
    const seen = await Promise.all(
      [first, first, second].map(async (host) => (await host.executor.execute("lifecycle", {})).output),
    );
    expect(seen[0]).toBeDefined();
    expect(seen[0]).toBe(seen[1]);
    expect(seen[0]).not.toBe(seen[2]);
  });
});

describe("SkillExecutor shutdown signal", () => {
  it("lets many executions run at once without a MaxListenersExceededWarning", async () => {
    const host = newHost();
    register(host, { name: "wait" });
    const release = deferred();
    host.executor.registerHandler("wait", () => release.promise.then(() => ({ ok: true })));
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const running = Array.from({ length: 64 }, () => host.executor.execute("wait", {}));
      release.resolve();
      const executions = await Promise.all(running);
      expect(executions.every((execution) => execution.status === "success")).toBe(true);
      // Node emits process warnings on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.filter((warning) => warning.name === "MaxListenersExceededWarning")).toEqual([]);
  });
});
