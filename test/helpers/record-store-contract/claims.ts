import { createExecutionId } from "@skillbox/core/internal";
import { expect, it } from "vitest";
import {
  claimOf,
  deadlinePassed,
  insert,
  type OpenRecordStore,
  RAW_INPUT_JSON,
  RAW_SECRET,
  successOutcome,
  withStore,
} from "./fixture.js";

/** Claims, leases, fenced writes and the end of a claimed execution. */
export function claimCases(open: OpenRecordStore): void {
  it("claim() takes a queued execution: running, a fence, a lease on the database clock, all a run needs", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store, {
        rerunnable: true,
        sessionId: "s1",
        idempotencyKey: "k1",
        totalTimeoutMs: null,
      });
      const before = await store.now();
      const claim = await claimOf(store, record.id, { workerId: "worker-7", leaseMs: 60_000 });
      const created = await store.get(record.id);
      expect(claim).toMatchObject({
        executionId: record.id,
        workerId: "worker-7",
        skillId: record.skillId,
        skillName: "echo",
        skillVersion: "1.0.0",
        contentHash: record.contentHash,
        apiKeyId: record.apiKeyId,
        sessionId: "s1",
        parentExecutionId: null,
        idempotencyKey: "k1",
        rawInputJson: RAW_INPUT_JSON,
        optionsJson: record.optionsJson,
        deadlineAt: null,
        attempts: 0,
        approval: null,
        rerunnable: true,
      });
      expect(claim.fence).toBeGreaterThan(0);
      expect(claim.leaseExpiresAt).toBeGreaterThanOrEqual(before + 60_000);
      expect(claim.createdAt).toBe(Date.parse(created?.createdAt ?? ""));
      expect(created).toMatchObject({ status: "running", attempts: 0, finishedAt: null });
      expect(await store.claim({ executionId: record.id, workerId: "worker-8", leaseMs: 60_000 })).toEqual({
        kind: "unavailable",
        status: "running",
      });
      expect(await store.claim({ executionId: createExecutionId(), workerId: "w", leaseMs: 1000 })).toEqual({
        kind: "unavailable",
        status: null,
      });
    });
  });

  it("of two stores claiming one execution at once, exactly one gets it", async () => {
    await withStore(open, async ({ store, openAnother }) => {
      const another = await openAnother();
      for (let round = 0; round < 5; round++) {
        const record = await insert(store);
        const results = await Promise.all([
          store.claim({ executionId: record.id, workerId: "worker-a", leaseMs: 60_000 }),
          another.claim({ executionId: record.id, workerId: "worker-b", leaseMs: 60_000 }),
        ]);
        expect(results.map((result) => result.kind).sort()).toEqual(["claimed", "unavailable"]);
      }
    });
  });

  it("a claim past the deadline ends the execution `timeout` (DEADLINE_EXCEEDED) and drops its input", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store, { totalTimeoutMs: 1 });
      await deadlinePassed(store, record.id, 1);
      const result = await store.claim({ executionId: record.id, workerId: "worker-1", leaseMs: 60_000 });
      if (result.kind !== "ended") throw new Error(`expected ended, got ${result.kind}`);
      expect(result.execution).toMatchObject({
        id: record.id,
        status: "timeout",
        error: { code: "DEADLINE_EXCEEDED" },
      });
      expect(result.execution.finishedAt).not.toBeNull();
      expect(await store.get(record.id)).toEqual(result.execution);
      expect(await store.claim({ executionId: record.id, workerId: "worker-1", leaseMs: 60_000 })).toEqual({
        kind: "unavailable",
        status: "timeout",
      });
      // A deadline still ahead is no obstacle, and the claim carries it.
      const ahead = await insert(store, { totalTimeoutMs: 3_600_000 });
      const created = Date.parse((await store.get(ahead.id))?.createdAt ?? "");
      expect((await claimOf(store, ahead.id)).deadlineAt).toBe(created + 3_600_000);
    });
  });

  it("renew() extends a current claim's lease; a stale fence is not held", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store);
      const claim = await claimOf(store, record.id, { leaseMs: 1000 });
      const renewed = await store.renew(claim, 120_000);
      expect(renewed).toMatchObject({ held: true, cancelRequested: false, cancelReason: null });
      expect(renewed.leaseExpiresAt).toBeGreaterThan(claim.leaseExpiresAt);
      for (const fence of [claim.fence - 1, claim.fence + 1]) {
        const stale = await store.renew({ executionId: record.id, fence }, 120_000);
        expect(stale.held).toBe(false);
        expect(stale.leaseExpiresAt).toBeNull();
      }
      expect((await store.renew({ executionId: createExecutionId(), fence: 1 }, 1000)).held).toBe(false);
    });
  });

  it("finish() commits the final state once; the claim then reads nothing, not even the raw input", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store);
      const claim = await claimOf(store, record.id);
      expect(await store.finish(claim, successOutcome({ echoed: "hello" }))).toBe(true);
      const finished = await store.get(record.id);
      expect(finished).toMatchObject({
        status: "success",
        output: { echoed: "hello" },
        error: null,
        attempts: 1,
        duration: 12.5,
        traceId: "0af7651916cd43dd8448eb211c80319c",
        spanId: "b7ad6b7169203331",
      });
      expect(Date.parse(finished?.finishedAt ?? "")).toBeGreaterThanOrEqual(
        Date.parse(finished?.createdAt ?? ""),
      );
      expect(JSON.stringify(finished)).not.toContain(RAW_SECRET);
      expect(await store.finish(claim, { ...successOutcome({ second: true }) })).toBe(false);
      expect((await store.get(record.id))?.output).toEqual({ echoed: "hello" });
      expect(await store.claim({ executionId: record.id, workerId: "w", leaseMs: 1000 })).toEqual({
        kind: "unavailable",
        status: "success",
      });
      expect((await store.renew(claim, 1000)).held).toBe(false);
      expect(await store.recordProgress(claim, JSON.stringify({ progress: 1 }))).toBe(false);
    });
  });

  it("finish() keeps an error's code, message and data (data only when given)", async () => {
    await withStore(open, async ({ store }) => {
      const withData = await insert(store);
      const withoutData = await insert(store);
      const first = await claimOf(store, withData.id);
      const second = await claimOf(store, withoutData.id);
      const failure = (dataJson: string | null) => ({
        status: "error" as const,
        outputJson: null,
        error: { code: "HANDLER_ERROR", message: "boom", dataJson },
        attempts: 3,
        durationMs: null,
        traceId: null,
        spanId: null,
      });
      expect(await store.finish(first, failure(JSON.stringify({ field: "a" })))).toBe(true);
      expect(await store.finish(second, failure(null))).toBe(true);
      expect((await store.get(withData.id))?.error).toEqual({
        code: "HANDLER_ERROR",
        message: "boom",
        data: { field: "a" },
      });
      expect((await store.get(withoutData.id))?.error).toEqual({ code: "HANDLER_ERROR", message: "boom" });
      expect(await store.get(withoutData.id)).toMatchObject({ attempts: 3, duration: null, output: null });
    });
  });

  it("with a stale fence, renew/finish/recordProgress/pause answer false and change nothing", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store);
      const claim = await claimOf(store, record.id);
      expect(await store.recordProgress(claim, JSON.stringify({ progress: 1, total: 4 }))).toBe(true);
      const before = await store.get(record.id);
      for (const fence of [claim.fence - 1, claim.fence + 1]) {
        const stale = { executionId: record.id, fence };
        expect((await store.renew(stale, 60_000)).held).toBe(false);
        expect(await store.finish(stale, successOutcome())).toBe(false);
        expect(await store.recordProgress(stale, JSON.stringify({ progress: 3 }))).toBe(false);
        expect(
          await store.pause(stale, {
            approval: {
              reason: "r",
              requestedBy: "handler",
              requestedAt: new Date().toISOString(),
              expiresAt: null,
              decision: null,
              decidedBy: null,
              decidedAt: null,
              comment: null,
              inputEdited: false,
            },
            approvalTimeoutMs: null,
            attempts: 1,
          }),
        ).toBe(false);
      }
      expect(await store.get(record.id)).toEqual(before);
      expect(before).toMatchObject({ status: "running", progress: { progress: 1, total: 4 } });
      // The current claim still holds.
      expect(await store.finish(claim, successOutcome())).toBe(true);
    });
  });

  it("recordProgress() stores the latest progress of the current claim", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store);
      const claim = await claimOf(store, record.id);
      expect(
        await store.recordProgress(claim, JSON.stringify({ progress: 1, total: 2, message: "half" })),
      ).toBe(true);
      expect(await store.recordProgress(claim, JSON.stringify({ progress: 2, total: 2 }))).toBe(true);
      expect((await store.get(record.id))?.progress).toEqual({ progress: 2, total: 2 });
    });
  });
}
