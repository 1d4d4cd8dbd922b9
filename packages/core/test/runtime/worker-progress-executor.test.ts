import { describe, expect, it } from "vitest";
import { registerWorker, useWorkerFixture } from "./worker-fixture.js";

// The worker runtime's progress reports through the executor: stored on the execution's row.

const fixture = useWorkerFixture();
const { newHost, handlerFile } = fixture;

describe("ctx.progress of a worker skill through the executor", () => {
  it("stores the latest report on the execution's record", async () => {
    const host = newHost();
    registerWorker(
      host,
      "steps",
      handlerFile(
        "steps.mjs",
        "export default async function steps(input, ctx) {",
        "  for (let step = 1; step <= 3; step++) {",
        '    ctx.progress({ progress: step, total: 3, message: "step " + step });',
        "    await new Promise((resolve) => setTimeout(resolve, 1));",
        "  }",
        "  return { approval: ctx.approval };",
        "}",
      ),
    );

    const execution = await host.executor.execute("steps", {});

    expect(execution.status).toBe("success");
    expect(execution.output).toEqual({ approval: null });
    expect(execution.progress).toMatchObject({ progress: 3, total: 3, message: "step 3" });
    expect((await host.executor.getExecution(execution.id))?.progress).toMatchObject({
      progress: 3,
      total: 3,
    });
  });
});
