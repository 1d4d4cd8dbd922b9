import { DEFAULT_PREVIEW_LENGTH, type SkillboxError } from "@skillbox/core";
import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { describe, expect, it } from "vitest";
import { useTemporaryHosts } from "./executor-test-bed.js";

const newTemporaryHost = useTemporaryHosts();

/** A host with `echo` (returns its input) and `fail` (throws a message of `input.length` characters). */
function newHost(): TemporaryHost {
  const host = newTemporaryHost();
  host.executor.registerHandler("echo", (input: unknown) => input);
  host.executor.registerHandler("fail", (input: { length: number }) => {
    throw new Error("e".repeat(input.length));
  });
  host.registry.registerMany([
    { name: "echo", version: "1.0.0", handler: "echo" },
    { name: "fail", version: "1.0.0", handler: "fail" },
  ]);
  return host;
}

describe("SkillExecutor.listExecutionSummaries", () => {
  it("previews each body: whole when short, cut with its full size in bytes when long", async () => {
    const host = newHost();
    const long = "ü".repeat(3000);
    await host.executor.execute("echo", { text: "héllo" });
    await host.executor.execute("echo", { text: long });

    const [big, small] = await host.executor.listExecutionSummaries();

    expect(small).toMatchObject({
      skillName: "echo",
      status: "success",
      inputPreview: {
        text: '{"text":"héllo"}',
        bytes: Buffer.byteLength('{"text":"héllo"}'),
        truncated: false,
      },
      outputPreview: { text: '{"text":"héllo"}', truncated: false },
    });
    expect(small).not.toHaveProperty("input");
    expect(small).not.toHaveProperty("output");
    // Cut by characters, so a multi-byte character is never split.
    expect(big!.inputPreview).toEqual({
      text: `{"text":"${long}`.slice(0, DEFAULT_PREVIEW_LENGTH),
      bytes: Buffer.byteLength(JSON.stringify({ text: long })),
      truncated: true,
    });
    expect(big!.outputPreview!.truncated).toBe(true);
    // The full record is unchanged.
    expect((await host.executor.getExecution(big!.id))!.input).toEqual({ text: long });
    expect((await host.executor.listExecutions())[0]!.input).toEqual({ text: long });
  });

  it("keeps an error's code and cuts its message, without data", async () => {
    const host = newHost();
    await host.executor.execute("fail", { length: 10 });
    await host.executor.execute("fail", { length: 5000 });

    const [long, short] = await host.executor.listExecutionSummaries({ previewLength: 100 });

    const shortRecord = (await host.executor.getExecution(short!.id))!;
    const longRecord = (await host.executor.getExecution(long!.id))!;
    expect(short!.error).toEqual({ code: "HANDLER_ERROR", message: shortRecord.error!.message });
    expect(long!.error).toEqual({
      code: "HANDLER_ERROR",
      message: `${longRecord.error!.message.slice(0, 100)}…`,
    });
    expect(longRecord.error!.message.length).toBeGreaterThan(5000);
    expect(long!.outputPreview).toBeNull();
  });

  it("ends a page before it crosses maxBytes, and paging by the count returned visits every row", async () => {
    const host = newHost();
    for (let index = 0; index < 30; index++) {
      await host.executor.execute("echo", { index, padding: "p".repeat(2000) });
    }
    const maxBytes = 10_000;

    const pages: number[][] = [];
    let offset = 0;
    while (offset < 30) {
      const page = await host.executor.listExecutionSummaries({ limit: 100, offset, maxBytes });
      expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(maxBytes);
      expect(page.length).toBeGreaterThan(0);
      pages.push(page.map((summary) => Number(/"index":(\d+)/.exec(summary.inputPreview!.text)![1])));
      offset += page.length;
    }

    expect(pages.length).toBeGreaterThan(1);
    expect(pages.flat()).toEqual(Array.from({ length: 30 }, (_, index) => 29 - index));
    // One summary over the budget is still returned, so paging always moves on.
    expect(await host.executor.listExecutionSummaries({ maxBytes: 1 })).toHaveLength(1);
  });

  it("refuses a bad previewLength or maxBytes with INPUT_INVALID naming it", async () => {
    const host = newHost();
    for (const [options, name] of [
      [{ previewLength: -1 }, "previewLength"],
      [{ previewLength: 1.5 }, "previewLength"],
      [{ previewLength: 1_000_000 }, "previewLength"],
      [{ maxBytes: 0 }, "maxBytes"],
    ] as const) {
      try {
        await host.executor.listExecutionSummaries(options);
        expect.unreachable();
      } catch (error) {
        expect((error as SkillboxError).code).toBe("INPUT_INVALID");
        expect((error as SkillboxError).message).toContain(`\`${name}\``);
      }
    }
  });
});
