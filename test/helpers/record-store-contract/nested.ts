import type { RecordNotice, SkillExecution } from "@skillbox/core";
import { createExecutionId } from "@skillbox/core/internal";
import { expect, it } from "vitest";
import { insert, NOTICE_WAIT, type OpenRecordStore, OWNER, withStore } from "./fixture.js";

/** A nested execution as a worker's audit trail recorded it once it ended. */
function endedChild(parentExecutionId: string, overrides: Partial<SkillExecution> = {}): SkillExecution {
  const createdAt = Date.now() - 5000;
  return {
    id: createExecutionId(createdAt),
    skillId: "skill-child-1",
    skillName: "child",
    skillVersion: "2.1.0",
    apiKeyId: OWNER,
    sessionId: "session-7",
    parentExecutionId,
    idempotencyKey: null,
    input: { text: "[redacted]" },
    output: { answer: 42 },
    status: "success",
    error: null,
    attempts: 2,
    duration: 17.25,
    progress: { progress: 3, total: 3, message: "done", at: new Date(createdAt + 100).toISOString() },
    approval: null,
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "00f067aa0ba902b7",
    createdAt: new Date(createdAt).toISOString(),
    finishedAt: new Date(createdAt + 18).toISOString(),
    ...overrides,
  } as SkillExecution;
}

/** `recordNested`: a nested execution that ended on a worker, handed over to the shared record. */
export function nestedCases(open: OpenRecordStore): void {
  it("recordNested() inserts the final row as the worker had it, listed under its parent", async () => {
    await withStore(open, async ({ store, openAnother }) => {
      const parent = await insert(store);
      const child = endedChild(parent.id);
      await store.recordNested(child, { contentHash: "sha256:child-2.1.0" });
      const another = await openAnother();
      expect(await another.get(child.id)).toEqual(child);
      expect(await another.get(child.id, "someone-else")).toBeUndefined();
      expect(await another.list({ parentExecutionId: parent.id })).toEqual([child]);
      expect(await another.count({ parentExecutionId: parent.id, status: "success" })).toBe(1);
      expect(await store.count({ sessionId: "session-7" })).toBe(1);
    });
  });

  it("recordNested() keeps a failure's error, data included", async () => {
    await withStore(open, async ({ store }) => {
      const child = endedChild("parent-9", {
        status: "error",
        output: null,
        error: { code: "HANDLER_ERROR", message: "it broke", data: { step: 2 } },
      } as Partial<SkillExecution>);
      await store.recordNested(child, { contentHash: "sha256:child" });
      expect(await store.get(child.id)).toEqual(child);
    });
  });

  it("recordNested() again with the same id writes nothing and tells nothing", async () => {
    await withStore(open, async ({ store, openAnother }) => {
      const child = endedChild("parent-1");
      await store.recordNested(child, { contentHash: "sha256:child" });
      const notices: RecordNotice[] = [];
      const another = await openAnother();
      const stop = await another.subscribe((notice) => notices.push(notice));
      try {
        await store.recordNested({ ...child, output: { answer: 0 } } as SkillExecution, {
          contentHash: "sha256:other",
        });
        expect(await store.get(child.id)).toEqual(child);
        expect(await store.count()).toBe(1);
        // A later change is told: had the repeat appended an event, it would come first.
        const marker = await insert(store);
        await expect
          .poll(() => notices.some((notice) => notice.executionId === marker.id), NOTICE_WAIT)
          .toBe(true);
        expect(notices.filter((notice) => notice.executionId === child.id)).toEqual([]);
      } finally {
        await stop();
      }
    });
  });

  it("recordNested() tells subscribers of every store the final status", async () => {
    await withStore(open, async ({ store, openAnother }) => {
      const another = await openAnother();
      const notices: RecordNotice[] = [];
      const stop = await another.subscribe((notice) => notices.push(notice));
      try {
        const child = endedChild("parent-2", {
          status: "cancelled",
          output: null,
        } as Partial<SkillExecution>);
        await store.recordNested(
          { ...child, error: { code: "CANCELLED", message: "the parent was cancelled" } } as SkillExecution,
          { contentHash: "sha256:child" },
        );
        await expect
          .poll(() => notices.filter((notice) => notice.executionId === child.id), NOTICE_WAIT)
          .toEqual([{ type: "status", executionId: child.id, apiKeyId: OWNER, status: "cancelled" }]);
      } finally {
        await stop();
      }
    });
  });

  it("recordNested() refuses an execution that has not ended (INPUT_INVALID) and writes nothing", async () => {
    await withStore(open, async ({ store }) => {
      const running = endedChild("parent-3", {
        status: "running",
        output: null,
        finishedAt: null,
      } as Partial<SkillExecution>);
      await expect(store.recordNested(running, { contentHash: "sha256:child" })).rejects.toMatchObject({
        code: "INPUT_INVALID",
      });
      expect(await store.get(running.id)).toBeUndefined();
    });
  });
}
