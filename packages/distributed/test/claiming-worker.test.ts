import type { ExecutionApproval, ExecutionClaim, ExecutionRecordStore } from "@skillbox/core";
import { ClaimingWorker, runStopKind } from "@skillbox/distributed";
import { pendingApproval } from "@skillbox/test-helpers/record-store-contract";
import { startRedisServer } from "@skillbox/test-helpers/redis-server";
import { describe, expect, it } from "vitest";
import {
  count,
  gate,
  overriding,
  RECORD_KINDS,
  stopped,
  submit,
  success,
  successOutcome,
  uniquePrefix,
  useQueueFixture,
  WAIT,
} from "./queue-fixture.js";

const { openRecord, openQueue, startWorker, onClose } = useQueueFixture();

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

describe.each(RECORD_KINDS)("ClaimingWorker (%s record)", (kind) => {
  it("runs and commits each execution once when its job is delivered to two workers", async () => {
    const record = await openRecord(kind);
    const [prefixA, prefixB] = [uniquePrefix(), uniquePrefix()];
    const [queueA, queueB] = [await openQueue(prefixA), await openQueue(prefixB)];
    const ran: string[] = [];
    const run = async (claim: ExecutionClaim) => {
      ran.push(claim.executionId);
      return success(claim, { by: claim.workerId });
    };
    const a = await startWorker({
      store: record.store,
      run,
      prefix: prefixA,
      workerId: "worker-a",
      concurrency: 4,
    });
    const b = await startWorker({
      store: await record.another(),
      run,
      prefix: prefixB,
      workerId: "worker-b",
      concurrency: 4,
    });
    const ids = await submit(record.store, queueA, 20);
    // The same job ids on a second queue: each execution is delivered twice, as after a re-add.
    await queueB.add(
      ids.map((executionId) => ({ executionId, queue: "default", contentHash: "sha256:echo-1" })),
    );

    const reports = () => [...a.reports, ...b.reports];
    await expect.poll(() => reports().length, WAIT).toBe(40);
    expect(count(ran)).toEqual(new Map(ids.map((id) => [id, 1])));
    const committed = reports().filter((report) => report.result === "committed");
    expect(committed.map((report) => report.executionId).sort()).toEqual([...ids].sort());
    expect(reports().filter((report) => report.result === "unavailable")).toHaveLength(20);
    for (const id of ids) expect((await record.store.get(id))?.status).toBe("success");
  });

  it("does nothing with a job delivered again after its execution ended", async () => {
    const record = await openRecord(kind);
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    let runs = 0;
    const { reports } = await startWorker({
      store: record.store,
      prefix,
      run: async (claim) => {
        runs++;
        return success(claim, "done");
      },
    });
    const [id] = await submit(record.store, queue);
    await expect.poll(() => reports.map((report) => report.result), WAIT).toEqual(["committed"]);
    await queue.add([{ executionId: id!, queue: "default", contentHash: "sha256:echo-1" }]);
    await expect
      .poll(() => reports.map((report) => report.result), WAIT)
      .toEqual(["committed", "unavailable"]);
    expect(runs).toBe(1);
    expect((await record.store.get(id!))?.output).toBe("done");
  });

  it("refuses the commit of a run that outlived its lease: the newer outcome stands", async () => {
    const record = await openRecord(kind);
    const other = await record.another();
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    const renewals = gate();
    const finishRun = gate();
    let claimed: ExecutionClaim | undefined;
    const { reports } = await startWorker({
      // Renewals held back, as for a worker paused or cut off from the database.
      store: withHeldRenewals(record.store, renewals.opened),
      prefix,
      leaseMs: 300,
      run: async (claim) => {
        claimed = claim;
        await finishRun.opened;
        return success(claim, "stale");
      },
    });
    const [id] = await submit(record.store, queue, 1, { rerunnable: true });
    await expect.poll(() => claimed, WAIT).toBeDefined();
    await expect.poll(async () => (await other.now()) > claimed!.leaseExpiresAt, WAIT).toBe(true);
    // Another host recovers the execution and runs it to the end first.
    expect(await other.recoverExpired({ limit: 10 })).toMatchObject([{ id, action: "requeued" }]);
    const second = await other.claim({ executionId: id!, workerId: "worker-other", leaseMs: 60_000 });
    if (second.kind !== "claimed") throw new Error(`expected a claim, got ${second.kind}`);
    expect(await other.finish(second.claim, successOutcome(second.claim, "newer"))).toBe(true);

    finishRun.open();
    await expect.poll(() => reports.map((report) => report.result), WAIT).toEqual(["refused"]);
    expect((await record.store.get(id!))?.output).toBe("newer");
    renewals.open();
  });

  it("stops a run whose renewal finds the claim taken over, and writes nothing", async () => {
    const record = await openRecord(kind);
    const other = await record.another();
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    const renewals = gate();
    let claimed: ExecutionClaim | undefined;
    let stopKind: string | undefined;
    const counted = countFinishes(withHeldRenewals(record.store, renewals.opened));
    const { reports } = await startWorker({
      store: counted.store,
      prefix,
      leaseMs: 300,
      run: async (claim, { signal }) => {
        claimed = claim;
        await untilAborted(signal);
        stopKind = runStopKind(signal);
        return success(claim, "stale");
      },
    });
    const [id] = await submit(record.store, queue, 1, { rerunnable: true });
    await expect.poll(() => claimed, WAIT).toBeDefined();
    await expect.poll(async () => (await other.now()) > claimed!.leaseExpiresAt, WAIT).toBe(true);
    await other.recoverExpired({ limit: 10 });
    const second = await other.claim({ executionId: id!, workerId: "worker-other", leaseMs: 60_000 });
    if (second.kind !== "claimed") throw new Error(`expected a claim, got ${second.kind}`);
    await other.finish(second.claim, successOutcome(second.claim, "newer"));

    renewals.open();
    await expect.poll(() => reports.map((report) => report.result), WAIT).toEqual(["lease-lost"]);
    expect(stopKind).toBe("lease-lost");
    expect(counted.finishes()).toBe(0);
    expect((await record.store.get(id!))?.output).toBe("newer");
  });

  it("stops a running execution cancelled from another host at the notice, before any heartbeat", async () => {
    const record = await openRecord(kind);
    const other = await record.another();
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    let started = false;
    const { reports } = await startWorker({
      store: record.store,
      prefix,
      // Renewals every 200 s: the test times out long before a heartbeat could tell the cancel.
      leaseMs: 600_000,
      run: async (claim, { signal }) => {
        started = true;
        await untilAborted(signal);
        return stopped(claim, signal);
      },
    });
    const [id] = await submit(record.store, queue);
    await expect.poll(() => started, WAIT).toBe(true);
    expect(await other.requestCancel({ id: id!, reason: "changed my mind" })).toMatchObject({
      kind: "requested",
    });
    await expect.poll(() => reports.map((report) => report.result), WAIT).toEqual(["committed"]);
    const execution = await record.store.get(id!);
    expect(execution?.status).toBe("cancelled");
    expect(execution?.error).toMatchObject({ code: "CANCELLED", message: "changed my mind" });
  });

  it("stops a run at the execution's deadline, by the database's clock", async () => {
    const record = await openRecord(kind);
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    const { reports } = await startWorker({
      store: record.store,
      prefix,
      run: async (claim, { signal }) => {
        await untilAborted(signal);
        return stopped(claim, signal);
      },
    });
    const [id] = await submit(record.store, queue, 1, { totalTimeoutMs: 1000 });
    await expect.poll(() => reports.map((report) => report.result), WAIT).toEqual(["committed"]);
    expect(await record.store.get(id!)).toMatchObject({ status: "timeout", error: { code: "TIMEOUT" } });
  });

  it("pauses a run for approval, and runs it again with the approval once its job is added again", async () => {
    const record = await openRecord(kind);
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    const approvals: (ExecutionApproval | null)[] = [];
    const { reports } = await startWorker({
      store: record.store,
      prefix,
      run: async (claim) => {
        approvals.push(claim.approval);
        if (claim.approval === null) {
          return {
            kind: "paused",
            approval: pendingApproval(),
            approvalTimeoutMs: null,
            attempts: claim.attempts + 1,
          };
        }
        return success(claim, "approved run");
      },
    });
    const [id] = await submit(record.store, queue);
    await expect.poll(() => reports.map((report) => report.result), WAIT).toEqual(["paused"]);
    expect((await record.store.get(id!))?.status).toBe("awaiting_approval");
    const decided = {
      ...pendingApproval(),
      decision: "approved" as const,
      decidedBy: "approver",
      decidedAt: new Date().toISOString(),
    };
    expect((await record.store.approve({ id: id!, approval: decided }))?.status).toBe("queued");
    // The first job completed and was removed, so the same id can be added again.
    await queue.add([{ executionId: id!, queue: "default", contentHash: "sha256:echo-1" }]);
    await expect.poll(() => reports.map((report) => report.result), WAIT).toEqual(["paused", "committed"]);
    expect(approvals).toEqual([
      null,
      expect.objectContaining({ decision: "approved", decidedBy: "approver" }),
    ]);
    expect((await record.store.get(id!))?.output).toBe("approved run");
  });

  it("records a run that throws as an error and goes on taking jobs", async () => {
    const record = await openRecord(kind);
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    let calls = 0;
    const { reports } = await startWorker({
      store: record.store,
      prefix,
      concurrency: 1,
      run: async (claim) => {
        calls++;
        if (calls === 1) throw new Error("the executor broke");
        return success(claim, "fine");
      },
    });
    const [broken] = await submit(record.store, queue);
    await expect.poll(() => reports.length, WAIT).toBe(1);
    const [fine] = await submit(record.store, queue);
    await expect.poll(() => reports.length, WAIT).toBe(2);
    expect(await record.store.get(broken!)).toMatchObject({
      status: "error",
      error: { code: "HANDLER_ERROR", message: "the executor broke" },
    });
    expect((await record.store.get(fine!))?.status).toBe("success");
  });

  it("runs at most `concurrency` executions at once across all its queues", async () => {
    const record = await openRecord(kind);
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    let running = 0;
    let most = 0;
    const releases: (() => void)[] = [];
    const { reports } = await startWorker({
      store: record.store,
      prefix,
      queues: ["default", "sandbox"],
      concurrency: 2,
      run: async (claim) => {
        running++;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => releases.push(resolve));
        running--;
        return success(claim, null);
      },
    });
    await submit(record.store, queue, 3);
    await submit(record.store, queue, 3, { queue: "sandbox" });
    // Released one at a time, each once both slots are taken again (the last one alone).
    for (let released = 0; released < 6; released++) {
      await expect.poll(() => releases.length, WAIT).toBe(Math.min(2, 6 - released));
      releases.shift()?.();
    }
    await expect.poll(() => reports.length, WAIT).toBe(6);
    expect(most).toBe(2);
  });

  it("stores progress, keeps a worker row with its skills, and removes it on close", async () => {
    const record = await openRecord(kind);
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    const progressed = gate();
    const { worker, reports } = await startWorker({
      store: record.store,
      prefix,
      workerId: "worker-progress",
      run: async (claim, { reportProgress }) => {
        reportProgress(JSON.stringify({ progress: 1, total: 4 }));
        reportProgress(JSON.stringify({ progress: 3, total: 4 }));
        await progressed.opened;
        return success(claim, null);
      },
    });
    const [id] = await submit(record.store, queue);
    await expect.poll(async () => (await record.store.get(id!))?.progress?.progress, WAIT).toBe(3);
    expect(await record.store.listWorkers()).toMatchObject([
      {
        workerId: "worker-progress",
        queues: ["default"],
        concurrency: 2,
        skills: [{ name: "echo", version: "1.0.0", contentHash: "sha256:echo-1" }],
      },
    ]);
    progressed.open();
    await expect.poll(() => reports.length, WAIT).toBe(1);
    await worker.close();
    expect(await record.store.listWorkers()).toEqual([]);
  });

  it("on close past its grace period stops the runs and writes nothing for them", async () => {
    const record = await openRecord(kind);
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    let stopKind: string | undefined;
    let started = false;
    const { worker, reports } = await startWorker({
      store: record.store,
      prefix,
      run: async (claim, { signal }) => {
        started = true;
        await untilAborted(signal);
        stopKind = runStopKind(signal);
        return stopped(claim, signal);
      },
    });
    const [id] = await submit(record.store, queue);
    await expect.poll(() => started, WAIT).toBe(true);
    await worker.close({ graceMs: 50 });
    expect(stopKind).toBe("shutdown");
    expect(reports.map((report) => report.result)).toEqual(["shutdown"]);
    // Still running in the record: its lease expiry hands it to recovery.
    expect((await record.store.get(id!))?.status).toBe("running");
  });

  it("refuses to start against a Redis that evicts keys", async () => {
    const evicting = await startRedisServer({ maxmemoryPolicy: "allkeys-lru" });
    onClose(() => evicting.stop());
    const record = await openRecord(kind);
    const worker = new ClaimingWorker({
      url: evicting.url,
      store: record.store,
      queues: ["default"],
      concurrency: 1,
      run: async () => {
        throw new Error("never runs");
      },
      describe: () => [],
    });
    await expect(worker.start()).rejects.toMatchObject({ code: "QUEUE_EVICTING" });
    expect(await record.store.listWorkers()).toEqual([]);
  });
});

/** `store` with `method` replaced by what `replace` makes of the original; every other method as it is. */
function overridingOne<Method extends keyof ExecutionRecordStore>(
  store: ExecutionRecordStore,
  method: Method,
  replace: (original: ExecutionRecordStore[Method]) => ExecutionRecordStore[Method],
): ExecutionRecordStore {
  const original = (store[method] as (...args: unknown[]) => unknown).bind(store);
  return overriding(store, { [method]: replace(original as ExecutionRecordStore[Method]) });
}

/**
 * The store with `renew` held until `released` resolves, and a clock an hour behind: the worker's
 * own lease timer (claiming-worker-lease.test.ts) would stop the run first, and these tests are
 * about what the record refuses to a worker that believes its lease still holds.
 */
function withHeldRenewals(store: ExecutionRecordStore, released: Promise<void>): ExecutionRecordStore {
  const held = overridingOne(store, "renew", (renew) => async (...args) => {
    await released;
    return renew(...args);
  });
  return overridingOne(held, "now", (now) => async () => (await now()) - 3_600_000);
}

/** The store, counting the `finish` calls made through it. */
function countFinishes(store: ExecutionRecordStore): { store: ExecutionRecordStore; finishes(): number } {
  let finishes = 0;
  const counted = overridingOne(store, "finish", (finish) => (...args) => {
    finishes++;
    return finish(...args);
  });
  return { store: counted, finishes: () => finishes };
}
