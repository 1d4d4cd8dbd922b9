import { SkillboxError } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { registerWorker, useWorkerFixture } from "./worker-fixture.js";

const { newHost, handlerFile } = useWorkerFixture();

/** A handler body that returns what it caught from `ctx.call`, field by field. */
const CATCHING_CALLER = [
  "export default async function order(_input, ctx) {",
  "  try {",
  '    return { called: await ctx.call("stock", {}) };',
  "  } catch (error) {",
  "    const { name, code, message, data, retryable } = error;",
  "    return { caught: { isError: error instanceof Error, name, code, message, data, retryable } };",
  "  }",
  "}",
];

/** What `CATCHING_CALLER` returned, without the nested execution's id (each call has its own). */
function withoutExecutionId(output: unknown): unknown {
  const { caught } = output as { caught: { data?: { executionId?: unknown } } };
  const { executionId: _id, ...data } = caught.data ?? {};
  return { caught: { ...caught, data } };
}

describe("errors a worker handler catches", () => {
  it("hands it a nested failure as an inline handler gets it: a SkillboxError with its code, data and retryable", async () => {
    const host = newHost();
    host.registry.register({ name: "stock", version: "1.0.0", apiKeyId: "public", handler: "stock" });
    host.executor.registerHandler("stock", () => {
      throw new SkillboxError("OUT_OF_STOCK", "no widgets left", {
        data: { sku: "w-1" },
        retryable: false,
      });
    });
    registerWorker(host, "order", handlerFile("order.mjs", ...CATCHING_CALLER), {
      requires: { stock: "1.x" },
    });
    // The same handler, inline: what a worker handler catches must not depend on where it runs.
    const inlineModule = await import(handlerFile("order-inline.mjs", ...CATCHING_CALLER));
    host.registry.register({
      name: "order-inline",
      version: "1.0.0",
      apiKeyId: "public",
      handler: "order-inline",
      requires: { stock: "1.x" },
    });
    host.executor.registerHandler("order-inline", inlineModule.default);

    const worker = await host.executor.execute("order", {});
    const inline = await host.executor.execute("order-inline", {});

    expect(worker.error).toBeNull();
    expect(inline.output).toMatchObject({
      caught: { isError: true, name: "SkillboxError", code: "OUT_OF_STOCK", message: "no widgets left" },
    });
    expect(inline.output.caught.retryable).toEqual(expect.any(Boolean));
    // Each call is its own nested execution, with its own id.
    expect(withoutExecutionId(worker.output)).toEqual(withoutExecutionId(inline.output));
  });

  it("hands it the worker's own refusal of an undeclared ctx.call as a SkillboxError that is not retried", async () => {
    const host = newHost();
    registerWorker(host, "order", handlerFile("undeclared.mjs", ...CATCHING_CALLER));

    const execution = await host.executor.execute("order", {});

    expect(execution.output).toEqual({
      caught: {
        isError: true,
        name: "SkillboxError",
        code: "UNDECLARED_DEPENDENCY",
        message: expect.stringContaining("requires"),
        retryable: false,
      },
    });
  });
});
