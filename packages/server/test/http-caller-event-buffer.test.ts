import type { ExecutionStreamEvent, SkillExecution } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import {
  type BufferedStreamEvent,
  ExecutionEventBuffer,
  MAX_PENDING_ACTIVITY_EVENTS,
  MAX_PENDING_FINISHED_EVENTS,
  MAX_PENDING_PROGRESS_EVENTS,
  MAX_PENDING_STATUS_EVENTS,
} from "../src/http/execution-event-buffer.js";

function finished(id: string): ExecutionStreamEvent {
  return { type: "finished", executionId: id, execution: { id, status: "success" } as SkillExecution };
}

function progress(id: string): ExecutionStreamEvent {
  return { type: "progress", executionId: id, progress: { progress: 1, at: "2026-01-01T00:00:00.000Z" } };
}

function activity(index: number): BufferedStreamEvent {
  return {
    type: "activity",
    activity: {
      type: "reloaded",
      at: `${index}`,
      owner: "system",
      package: { kind: "skill", name: "echo", version: "1.0.0", root: "echo" },
    },
  };
}

async function drain(buffer: ExecutionEventBuffer<BufferedStreamEvent>): Promise<BufferedStreamEvent[]> {
  buffer.end();
  const taken: BufferedStreamEvent[] = [];
  for (;;) {
    const next = await buffer.next(1000, new AbortController().signal);
    if (next === "end" || next === "idle") return taken;
    taken.push(next);
  }
}

describe("ExecutionEventBuffer (a stream of many executions and loader activity)", () => {
  it("stays bounded however many executions finish and report while the client does not read", async () => {
    const buffer = new ExecutionEventBuffer<BufferedStreamEvent>();
    for (let index = 0; index < 10_000; index++) {
      buffer.push(progress(`e${index}`));
      buffer.push(finished(`e${index}`));
      buffer.push(activity(index));
    }

    expect(buffer.size).toBe(
      MAX_PENDING_PROGRESS_EVENTS + MAX_PENDING_FINISHED_EVENTS + MAX_PENDING_ACTIVITY_EVENTS,
    );
    expect(buffer.size).toBeLessThanOrEqual(
      MAX_PENDING_STATUS_EVENTS +
        MAX_PENDING_FINISHED_EVENTS +
        MAX_PENDING_PROGRESS_EVENTS +
        MAX_PENDING_ACTIVITY_EVENTS,
    );
    // Progress reports give way silently; finished and activity events are counted.
    expect(buffer.takeDropped()).toBe(
      10_000 - MAX_PENDING_FINISHED_EVENTS + 10_000 - MAX_PENDING_ACTIVITY_EVENTS,
    );
    expect(buffer.takeDropped()).toBe(0);
    const taken = await drain(buffer);
    const finishedIds = taken.flatMap((event) => (event.type === "finished" ? [event.executionId] : []));
    expect(finishedIds).toEqual(
      Array.from(
        { length: MAX_PENDING_FINISHED_EVENTS },
        (_, index) => `e${10_000 - MAX_PENDING_FINISHED_EVENTS + index}`,
      ),
    );
  });

  it("drops nothing and counts nothing while under its bounds", async () => {
    const buffer = new ExecutionEventBuffer<BufferedStreamEvent>();
    buffer.push(activity(1));
    buffer.push(finished("e1"));
    buffer.push(activity(2));

    expect(buffer.takeDropped()).toBe(0);
    expect((await drain(buffer)).map((event) => event.type)).toEqual(["activity", "finished", "activity"]);
  });
});
