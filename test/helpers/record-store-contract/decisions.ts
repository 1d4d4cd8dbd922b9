import { createExecutionId } from "@skillbox/core/internal";
import { expect, it } from "vitest";
import {
  claimOf,
  decided,
  insert,
  type OpenRecordStore,
  OTHER_OWNER,
  OWNER,
  pendingApproval,
  RAW_INPUT_JSON,
  successOutcome,
  withStore,
} from "./fixture.js";

/** Approvals, unclaimed ends and cancel requests. */
export function decisionCases(open: OpenRecordStore): void {
  it("pause() stops a claim at awaiting_approval; approve() queues it again, edited input and all", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store);
      const first = await claimOf(store, record.id);
      const approval = pendingApproval();
      expect(await store.pause(first, { approval, approvalTimeoutMs: null, attempts: 1 })).toBe(true);
      expect(await store.get(record.id)).toMatchObject({
        status: "awaiting_approval",
        // Asked now by the database's clock (see the deadline cases).
        approval: { ...approval, requestedAt: expect.any(String) },
        attempts: 1,
      });
      expect((await store.renew(first, 1000)).held).toBe(false);
      expect(await store.finish(first, successOutcome())).toBe(false);
      expect(await store.claim({ executionId: record.id, workerId: "w", leaseMs: 1000 })).toEqual({
        kind: "unavailable",
        status: "awaiting_approval",
      });
      const granted = decided(approval, "approved", true);
      expect(await store.approve({ id: record.id, owner: OTHER_OWNER, approval: granted })).toBeUndefined();
      expect((await store.get(record.id))?.status).toBe("awaiting_approval");
      const approved = await store.approve({
        id: record.id,
        owner: OWNER,
        approval: granted,
        rawInputJson: JSON.stringify({ text: "edited" }),
        auditedInputJson: JSON.stringify({ text: "[edited]" }),
      });
      expect(approved).toMatchObject({
        status: "queued",
        approval: granted,
        input: { text: "[edited]" },
        attempts: 1,
      });
      expect(await store.approve({ id: record.id, approval: granted })).toBeUndefined();
      const second = await claimOf(store, record.id);
      expect(second.fence).toBeGreaterThan(first.fence);
      expect(second).toMatchObject({
        rawInputJson: JSON.stringify({ text: "edited" }),
        approval: granted,
        attempts: 1,
      });
      expect(await store.finish(first, successOutcome())).toBe(false);
      expect(await store.finish(second, successOutcome())).toBe(true);
    });
  });

  it("approve() without a new input runs the original raw input", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store);
      const approval = pendingApproval();
      expect(
        await store.pause(await claimOf(store, record.id), {
          approval,
          approvalTimeoutMs: null,
          attempts: 0,
        }),
      ).toBe(true);
      expect(await store.approve({ id: record.id, approval: decided(approval, "approved") })).toMatchObject({
        status: "queued",
      });
      expect((await claimOf(store, record.id)).rawInputJson).toBe(RAW_INPUT_JSON);
    });
  });

  it("endUnclaimed() ends a queued or awaiting execution as `from` allows, scoped to its owner", async () => {
    await withStore(open, async ({ store }) => {
      const queued = await insert(store);
      const end = { status: "cancelled" as const, code: "CANCELLED", message: "cancelled before it started" };
      expect(
        await store.endUnclaimed({ id: queued.id, from: ["awaiting_approval"], ...end }),
      ).toBeUndefined();
      expect(
        await store.endUnclaimed({ id: queued.id, owner: OTHER_OWNER, from: ["queued"], ...end }),
      ).toBeUndefined();
      expect((await store.get(queued.id))?.status).toBe("queued");
      const ended = await store.endUnclaimed({ id: queued.id, owner: OWNER, from: ["queued"], ...end });
      expect(ended).toMatchObject({
        status: "cancelled",
        error: { code: "CANCELLED", message: end.message },
      });
      expect(ended?.finishedAt).not.toBeNull();
      expect(await store.get(queued.id)).toEqual(ended);
      expect(await store.endUnclaimed({ id: queued.id, from: ["queued"], ...end })).toBeUndefined();
      expect((await store.claim({ executionId: queued.id, workerId: "w", leaseMs: 1000 })).kind).toBe(
        "unavailable",
      );

      const awaiting = await insert(store);
      const approval = pendingApproval();
      expect(
        await store.pause(await claimOf(store, awaiting.id), {
          approval,
          approvalTimeoutMs: null,
          attempts: 1,
        }),
      ).toBe(true);
      const rejection = decided(approval, "rejected");
      const rejected = await store.endUnclaimed({
        id: awaiting.id,
        from: ["queued", "awaiting_approval"],
        status: "rejected",
        code: "APPROVAL_REJECTED",
        message: "approver-1 rejected it: not today",
        approval: rejection,
      });
      expect(rejected).toMatchObject({
        status: "rejected",
        approval: rejection,
        error: { code: "APPROVAL_REJECTED" },
      });
      expect(
        await store.approve({ id: awaiting.id, approval: decided(approval, "approved") }),
      ).toBeUndefined();

      const running = await insert(store);
      await claimOf(store, running.id);
      expect(
        await store.endUnclaimed({ id: running.id, from: ["queued", "awaiting_approval"], ...end }),
      ).toBeUndefined();
      expect((await store.get(running.id))?.status).toBe("running");
      expect(await store.endUnclaimed({ id: createExecutionId(), from: ["queued"], ...end })).toBeUndefined();
    });
  });

  it("requestCancel(): queued and awaiting end at once, running is asked (renew tells), final and unknown say so", async () => {
    await withStore(open, async ({ store }) => {
      const queued = await insert(store);
      const ended = await store.requestCancel({ id: queued.id, owner: OWNER, reason: "changed my mind" });
      if (ended.kind !== "ended") throw new Error(`expected ended, got ${ended.kind}`);
      expect(ended.execution).toMatchObject({
        id: queued.id,
        status: "cancelled",
        error: { code: "CANCELLED" },
      });
      expect(await store.requestCancel({ id: queued.id, reason: null })).toMatchObject({
        kind: "final",
        execution: { status: "cancelled" },
      });

      const awaiting = await insert(store);
      await store.pause(await claimOf(store, awaiting.id), {
        approval: pendingApproval(),
        approvalTimeoutMs: null,
        attempts: 0,
      });
      expect(await store.requestCancel({ id: awaiting.id, reason: null })).toMatchObject({
        kind: "ended",
        execution: { status: "cancelled" },
      });

      const running = await insert(store);
      const claim = await claimOf(store, running.id);
      expect(await store.requestCancel({ id: running.id, owner: OTHER_OWNER, reason: "x" })).toEqual({
        kind: "unknown",
      });
      expect((await store.renew(claim, 60_000)).cancelRequested).toBe(false);
      const requested = await store.requestCancel({ id: running.id, owner: OWNER, reason: "stop please" });
      expect(requested).toMatchObject({
        kind: "requested",
        execution: { id: running.id, status: "running" },
      });
      expect(await store.renew(claim, 60_000)).toMatchObject({
        held: true,
        cancelRequested: true,
        cancelReason: "stop please",
      });
      expect(
        await store.finish(claim, {
          status: "cancelled",
          outputJson: null,
          error: { code: "CANCELLED", message: "stop please", dataJson: null },
          attempts: 1,
          durationMs: 5,
          traceId: null,
          spanId: null,
        }),
      ).toBe(true);
      expect(await store.requestCancel({ id: running.id, reason: null })).toMatchObject({ kind: "final" });
      expect(await store.requestCancel({ id: createExecutionId(), reason: null })).toEqual({
        kind: "unknown",
      });
      expect(await store.requestCancel({ id: queued.id, owner: OTHER_OWNER, reason: null })).toEqual({
        kind: "unknown",
      });
    });
  });
}
