import { expect, it } from "vitest";
import {
  approvalLapsed,
  claimOf,
  deadlinePassed,
  decided,
  insert,
  leaseLapsed,
  type OpenRecordStore,
  OTHER_OWNER,
  OWNER,
  pendingApproval,
  withStore,
} from "./fixture.js";

/**
 * Deadlines, approval expiries and requeue bounds: every one stamped and compared on the
 * database's clock, and none that lets an execution live for ever.
 */
export function deadlineCases(open: OpenRecordStore): void {
  it("approve() past the approval deadline grants nothing: the execution ends `rejected` (APPROVAL_EXPIRED) at once", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store);
      const approval = pendingApproval();
      expect(
        await store.pause(await claimOf(store, record.id), { approval, approvalTimeoutMs: 1, attempts: 1 }),
      ).toBe(true);
      await approvalLapsed(store, record.id);
      const granted = decided(approval, "approved");
      // Someone else's execution stays as it is: they cannot even expire it.
      expect(await store.approve({ id: record.id, owner: OTHER_OWNER, approval: granted })).toBeUndefined();
      expect((await store.get(record.id))?.status).toBe("awaiting_approval");
      expect(await store.approve({ id: record.id, owner: OWNER, approval: granted })).toBeUndefined();
      const expired = await store.get(record.id);
      expect(expired).toMatchObject({ status: "rejected", error: { code: "APPROVAL_EXPIRED" } });
      expect(expired?.approval?.decision).toBe("expired");
      expect(expired?.finishedAt).not.toBeNull();
      expect((await store.claim({ executionId: record.id, workerId: "w", leaseMs: 1000 })).kind).toBe(
        "unavailable",
      );
      expect(await store.recoverExpired({ limit: 10 })).toEqual([]);
    });
  });

  it("recoverExpired(): each lost lease counts an attempt, and after 3 requeues the next lost lease ends it `interrupted`", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store, { rerunnable: true });
      for (let requeue = 0; requeue < 3; requeue++) {
        const lost = await claimOf(store, record.id, { leaseMs: 1 });
        expect(lost.attempts).toBe(requeue);
        await leaseLapsed(store, lost);
        expect((await store.recoverExpired({ limit: 10 })).map((entry) => entry.action)).toEqual([
          "requeued",
        ]);
        expect(await store.get(record.id)).toMatchObject({ status: "queued", attempts: requeue + 1 });
      }
      const last = await claimOf(store, record.id, { leaseMs: 1 });
      expect(last.attempts).toBe(3);
      await leaseLapsed(store, last);
      expect(await store.recoverExpired({ limit: 10 })).toEqual([
        { id: record.id, action: "interrupted", queue: "default", contentHash: record.contentHash },
      ]);
      const interrupted = await store.get(record.id);
      expect(interrupted).toMatchObject({
        status: "interrupted",
        attempts: 4,
        error: { code: "INTERRUPTED" },
      });
      expect(interrupted?.error?.message).toContain("requeued 3 times");
      expect((await store.claim({ executionId: record.id, workerId: "w", leaseMs: 1000 })).kind).toBe(
        "unavailable",
      );
    });
  });

  it("recoverExpired(): a queued execution past its deadline that no worker takes ends `timeout` (DEADLINE_EXCEEDED)", async () => {
    await withStore(open, async ({ store }) => {
      const late = await insert(store, { queue: "gpu", totalTimeoutMs: 1 });
      const ahead = await insert(store, { totalTimeoutMs: 3_600_000 });
      const unbounded = await insert(store);
      await deadlinePassed(store, late.id, 1);
      expect(await store.recoverExpired({ limit: 10 })).toEqual([
        { id: late.id, action: "timed-out", queue: "gpu", contentHash: late.contentHash },
      ]);
      const ended = await store.get(late.id);
      expect(ended).toMatchObject({ status: "timeout", error: { code: "DEADLINE_EXCEEDED" } });
      expect(ended?.finishedAt).not.toBeNull();
      expect(
        (await store.staleQueued({ olderThanMs: 0, limit: 10 })).map((entry) => entry.id).sort(),
      ).toEqual([ahead.id, unbounded.id].sort());
      expect(await store.recoverExpired({ limit: 10 })).toEqual([]);
    });
  });

  it("insertQueued() sets the deadline `totalTimeoutMs` after the database's now, never a host's clock", async () => {
    await withStore(open, async ({ store }) => {
      const before = await store.now();
      const bounded = await insert(store, { totalTimeoutMs: 60_000 });
      const after = await store.now();
      const claim = await claimOf(store, bounded.id);
      expect(claim.deadlineAt).toBeGreaterThanOrEqual(before + 60_000);
      expect(claim.deadlineAt).toBeLessThanOrEqual(after + 60_000);
      const unbounded = await insert(store, { totalTimeoutMs: null });
      expect((await claimOf(store, unbounded.id)).deadlineAt).toBeNull();
    });
  });

  it("pause() sets the approval deadline `approvalTimeoutMs` after the database's now, in the record's approval too", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store);
      // As a worker whose clock is decades behind would ask: neither of its times may count.
      const epoch = new Date(0).toISOString();
      const skewed = { ...pendingApproval(epoch), requestedAt: epoch };
      const before = await store.now();
      expect(
        await store.pause(await claimOf(store, record.id), {
          approval: skewed,
          approvalTimeoutMs: 60_000,
          attempts: 0,
        }),
      ).toBe(true);
      const after = await store.now();
      const approval = (await store.get(record.id))?.approval;
      const expiresAt = Date.parse(approval?.expiresAt ?? "");
      expect(expiresAt).toBeGreaterThanOrEqual(before + 60_000);
      expect(expiresAt).toBeLessThanOrEqual(after + 60_000);
      const requestedAt = Date.parse(approval?.requestedAt ?? "");
      expect(requestedAt).toBeGreaterThanOrEqual(before);
      expect(requestedAt).toBeLessThanOrEqual(after);
      expect(await store.recoverExpired({ limit: 10 })).toEqual([]);
      expect((await store.get(record.id))?.status).toBe("awaiting_approval");

      const forever = await insert(store);
      await store.pause(await claimOf(store, forever.id), {
        approval: pendingApproval(epoch),
        approvalTimeoutMs: null,
        attempts: 0,
      });
      expect((await store.get(forever.id))?.approval?.expiresAt).toBeNull();
    });
  });
}
