import { expect, it } from "vitest";
import {
  approvalLapsed,
  claimOf,
  insert,
  leaseLapsed,
  NOTICE_WAIT,
  type OpenRecordStore,
  pendingApproval,
  successOutcome,
  withStore,
} from "./fixture.js";

/** Expired leases and approvals, and the sweeper's view of jobs never added to the queue. */
export function recoveryCases(open: OpenRecordStore): void {
  it("recoverExpired(): a rerunnable execution whose lease lapsed is queued again with a higher fence", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store, { rerunnable: true, queue: "sandbox" });
      const lost = await claimOf(store, record.id, { leaseMs: 1 });
      await leaseLapsed(store, lost);
      const recovered = await store.recoverExpired({ limit: 10 });
      expect(recovered).toEqual([
        { id: record.id, action: "requeued", queue: "sandbox", contentHash: record.contentHash },
      ]);
      expect(await store.get(record.id)).toMatchObject({ status: "queued", finishedAt: null });
      // The worker that lost its lease comes back: nothing it writes counts.
      expect((await store.renew(lost, 60_000)).held).toBe(false);
      expect(await store.finish(lost, successOutcome({ late: true }))).toBe(false);
      expect(await store.staleQueued({ olderThanMs: 60_000, limit: 10 })).toEqual([
        { id: record.id, queue: "sandbox", contentHash: record.contentHash },
      ]);
      const next = await claimOf(store, record.id);
      expect(next.fence).toBeGreaterThan(lost.fence);
      expect(await store.finish(lost, successOutcome({ late: true }))).toBe(false);
      expect(await store.finish(next, successOutcome({ second: true }))).toBe(true);
      expect((await store.get(record.id))?.output).toEqual({ second: true });
      expect(await store.recoverExpired({ limit: 10 })).toEqual([]);
    });
  });

  it("recoverExpired(): any other execution whose lease lapsed ends `interrupted`", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store, { rerunnable: false });
      const lost = await claimOf(store, record.id, { leaseMs: 1 });
      const alive = await insert(store);
      const held = await claimOf(store, alive.id, { leaseMs: 600_000 });
      await leaseLapsed(store, lost);
      expect(await store.recoverExpired({ limit: 10 })).toEqual([
        { id: record.id, action: "interrupted", queue: "default", contentHash: record.contentHash },
      ]);
      const interrupted = await store.get(record.id);
      expect(interrupted).toMatchObject({ status: "interrupted", error: { code: "INTERRUPTED" } });
      expect(interrupted?.finishedAt).not.toBeNull();
      expect(await store.finish(lost, successOutcome())).toBe(false);
      expect((await store.claim({ executionId: record.id, workerId: "w", leaseMs: 1000 })).kind).toBe(
        "unavailable",
      );
      // A lease not yet lapsed is left alone.
      expect((await store.renew(held, 600_000)).held).toBe(true);
      expect((await store.get(alive.id))?.status).toBe("running");
    });
  });

  it("recoverExpired(): an approval past its deadline ends `rejected` (APPROVAL_EXPIRED, decision expired)", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store);
      const claim = await claimOf(store, record.id);
      expect(
        await store.pause(claim, { approval: pendingApproval(), approvalTimeoutMs: 1, attempts: 1 }),
      ).toBe(true);
      const waiting = await insert(store);
      await store.pause(await claimOf(store, waiting.id), {
        approval: pendingApproval(),
        approvalTimeoutMs: 3_600_000,
        attempts: 0,
      });
      await approvalLapsed(store, record.id);
      expect(await store.recoverExpired({ limit: 10 })).toEqual([
        { id: record.id, action: "expired", queue: "default", contentHash: record.contentHash },
      ]);
      const expired = await store.get(record.id);
      expect(expired).toMatchObject({ status: "rejected", error: { code: "APPROVAL_EXPIRED" } });
      expect(expired?.approval?.decision).toBe("expired");
      expect((await store.get(waiting.id))?.status).toBe("awaiting_approval");
    });
  });

  it("recoverExpired() changes at most `limit` of a kind per call", async () => {
    await withStore(open, async ({ store }) => {
      const claims = [];
      for (let index = 0; index < 3; index++) {
        claims.push(await claimOf(store, (await insert(store, { rerunnable: true })).id, { leaseMs: 1 }));
      }
      for (const claim of claims) await leaseLapsed(store, claim);
      expect(await store.recoverExpired({ limit: 2 })).toHaveLength(2);
      expect(await store.recoverExpired({ limit: 2 })).toHaveLength(1);
      expect(await store.count({ status: "queued" })).toBe(3);
    });
  });

  it("a cancel asked while running ends the execution when it is claimed after a requeue", async () => {
    await withStore(open, async ({ store }) => {
      const record = await insert(store, { rerunnable: true });
      const lost = await claimOf(store, record.id, { leaseMs: 1 });
      expect((await store.requestCancel({ id: record.id, reason: "stop" })).kind).toBe("requested");
      await leaseLapsed(store, lost);
      expect((await store.recoverExpired({ limit: 10 })).map((entry) => entry.action)).toEqual(["requeued"]);
      const result = await store.claim({ executionId: record.id, workerId: "w", leaseMs: 60_000 });
      expect(result).toMatchObject({ kind: "ended", execution: { status: "cancelled" } });
    });
  });

  it("staleQueued() lists queued executions not added (recently) to the queue, oldest first; markEnqueued() notes them", async () => {
    await withStore(open, async ({ store }) => {
      const a = await insert(store, { queue: "default" });
      const b = await insert(store, { queue: "sandbox", contentHash: "sha256:b" });
      const c = await insert(store);
      await claimOf(store, c.id);
      expect(await store.staleQueued({ olderThanMs: 60_000, limit: 10 })).toEqual([
        { id: a.id, queue: "default", contentHash: a.contentHash },
        { id: b.id, queue: "sandbox", contentHash: "sha256:b" },
      ]);
      expect(await store.staleQueued({ olderThanMs: 60_000, limit: 1 })).toHaveLength(1);
      await store.markEnqueued([]);
      await store.markEnqueued([a.id]);
      expect((await store.staleQueued({ olderThanMs: 60_000, limit: 10 })).map((entry) => entry.id)).toEqual([
        b.id,
      ]);
      // Once the enqueue is older than the bound, the sweeper adds it again.
      await expect
        .poll(
          async () =>
            (await store.staleQueued({ olderThanMs: 1, limit: 10 })).map((entry) => entry.id).sort(),
          NOTICE_WAIT,
        )
        .toEqual([a.id, b.id].sort());
    });
  });
}
