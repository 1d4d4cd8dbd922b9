import type { ExecutionStreamEvent, SkillExecution } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { ExecutionEventBuffer, MAX_PENDING_STATUS_EVENTS } from "../src/http/execution-event-buffer.js";

const record = { id: "e1", status: "running" } as SkillExecution;

function progress(value: number): ExecutionStreamEvent {
  return {
    type: "progress",
    executionId: "e1",
    progress: { progress: value, at: "2026-01-01T00:00:00.000Z" },
  };
}

function status(at: string): ExecutionStreamEvent {
  return { type: "status", executionId: "e1", status: "running", at, execution: record };
}

describe("ExecutionEventBuffer", () => {
  it("keeps only the latest unsent progress, so a client that is behind costs one event", () => {
    const buffer = new ExecutionEventBuffer();
    buffer.push(status("first"));
    for (let value = 1; value <= 10_000; value++) buffer.push(progress(value));

    expect(buffer.size).toBe(2);
  });

  it("keeps the newest status events past its bound and always the finished event, in order", async () => {
    const buffer = new ExecutionEventBuffer();
    const signal = new AbortController().signal;
    for (let index = 0; index < 100; index++) buffer.push(status(`${index}`));
    buffer.push(progress(7));
    buffer.push({
      type: "finished",
      executionId: "e1",
      execution: { ...record, status: "success" } as SkillExecution,
    });
    buffer.end();

    const taken: ExecutionStreamEvent[] = [];
    for (;;) {
      const next = await buffer.next(1000, signal);
      if (next === "end" || next === "idle") break;
      taken.push(next);
    }

    expect(taken).toHaveLength(MAX_PENDING_STATUS_EVENTS + 2);
    expect(
      taken.filter((event) => event.type === "status").map((event) => (event as { at: string }).at),
    ).toEqual(
      Array.from(
        { length: MAX_PENDING_STATUS_EVENTS },
        (_, index) => `${100 - MAX_PENDING_STATUS_EVENTS + index}`,
      ),
    );
    expect(taken.at(-2)).toMatchObject({ type: "progress", progress: { progress: 7 } });
    expect(taken.at(-1)).toMatchObject({ type: "finished" });
  });

  it("wakes a waiting reader on a push, answers idle when nothing comes, and end once ended", async () => {
    const buffer = new ExecutionEventBuffer();
    const signal = new AbortController().signal;

    expect(await buffer.next(1, signal)).toBe("idle");
    const waiting = buffer.next(60_000, signal);
    buffer.push(progress(1));
    expect(await waiting).toMatchObject({ type: "progress" });
    const ending = buffer.next(60_000, signal);
    buffer.end(new Error("closed"));
    expect(await ending).toBe("end");
    expect((buffer.failure as Error).message).toBe("closed");
    buffer.push(progress(2));
    expect(buffer.size).toBe(0);
  });

  it("ends a waiting reader when its signal aborts", async () => {
    const buffer = new ExecutionEventBuffer();
    const controller = new AbortController();
    const waiting = buffer.next(60_000, controller.signal);
    controller.abort();

    expect(await waiting).toBe("end");
  });
});
