import { type ExecutionClaim, SkillboxError } from "@skillbox/core";
import { runStopKind } from "@skillbox/distributed";
import { describe, expect, it } from "vitest";
import {
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

const { openRecord, openQueue, startWorker } = useQueueFixture();

/** The stop kind of `signal` once aborted, read at the abort itself (not when the run returns). */
function watchStop(signal: AbortSignal, onStop: (kind: string | undefined) => void): Promise<void> {
  return new Promise((resolve) => {
    const stopped = () => {
      onStop(runStopKind(signal));
      resolve();
    };
    if (signal.aborted) stopped();
    else signal.addEventListener("abort", stopped, { once: true });
  });
}

describe.each(RECORD_KINDS)("ClaimingWorker leases (%s record)", (kind) => {
  it("stops a run whose renewals are held back before its lease runs out: a second claim never runs beside it", async () => {
    const record = await openRecord(kind);
    const other = await record.another();
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    const renewals = gate();
    let finishes = 0;
    let claimed: ExecutionClaim | undefined;
    let stopKind: string | undefined;
    const { reports } = await startWorker({
      // Renewals held back, as behind an exhausted pool or a statement that does not return.
      store: overriding(record.store, {
        renew: async (claim, leaseMs) => {
          await renewals.opened;
          return record.store.renew(claim, leaseMs);
        },
        finish: (claim, outcome) => {
          finishes++;
          return record.store.finish(claim, outcome);
        },
      }),
      prefix,
      leaseMs: 1500,
      run: async (claim, { signal }) => {
        claimed = claim;
        await watchStop(signal, (kind) => {
          stopKind = kind;
        });
        return success(claim, "first");
      },
    });
    const [id] = await submit(record.store, queue, 1, { rerunnable: true });
    await expect.poll(() => claimed, WAIT).toBeDefined();
    // Past the lease by the database's clock another host may recover the execution and claim it.
    await expect.poll(async () => (await other.now()) > claimed!.leaseExpiresAt, WAIT).toBe(true);
    expect(await other.recoverExpired({ limit: 10 })).toMatchObject([{ id, action: "requeued" }]);
    const second = await other.claim({ executionId: id!, workerId: "worker-other", leaseMs: 60_000 });
    if (second.kind !== "claimed") throw new Error(`expected a claim, got ${second.kind}`);
    expect(second.claim.fence).toBeGreaterThan(claimed!.fence);
    // The first run was stopped before the second claim could start running.
    expect(stopKind).toBe("lease-lost");
    expect(await other.finish(second.claim, successOutcome(second.claim, "second"))).toBe(true);

    renewals.open();
    await expect.poll(() => reports.map((report) => report.result), WAIT).toEqual(["lease-lost"]);
    expect(finishes).toBe(0);
    expect((await record.store.get(id!))?.output).toBe("second");
  });

  it("gives up a renewal that does not answer and renews again: the run keeps its lease", async () => {
    const record = await openRecord(kind);
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    const stuck = gate();
    const finishRun = gate();
    let renewCalls = 0;
    const renewedUntil: number[] = [];
    let claimed: ExecutionClaim | undefined;
    let stopKind: string | undefined;
    const { reports } = await startWorker({
      store: overriding(record.store, {
        renew: async (claim, leaseMs) => {
          // The first renewal never answers while the run lasts; the later ones do.
          if (++renewCalls === 1) await stuck.opened;
          const result = await record.store.renew(claim, leaseMs);
          if (result.held && result.leaseExpiresAt !== null) renewedUntil.push(result.leaseExpiresAt);
          return result;
        },
      }),
      prefix,
      leaseMs: 3000,
      run: async (claim, { signal }) => {
        claimed = claim;
        void watchStop(signal, (kind) => {
          stopKind = kind;
        });
        await finishRun.opened;
        return success(claim, "kept");
      },
    });
    const [id] = await submit(record.store, queue);
    await expect.poll(() => claimed, WAIT).toBeDefined();
    await expect.poll(() => renewedUntil.some((until) => until > claimed!.leaseExpiresAt), WAIT).toBe(true);
    expect(stopKind).toBeUndefined();
    finishRun.open();
    await expect.poll(() => reports.map((report) => report.result), WAIT).toEqual(["committed"]);
    expect((await record.store.get(id!))?.output).toBe("kept");
    stuck.open();
  });

  it("retries a commit the database fails for as long as the lease holds", async () => {
    const record = await openRecord(kind);
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    let failures = 0;
    const { reports } = await startWorker({
      store: overriding(record.store, {
        finish: async (claim, outcome) => {
          // Four failures in a row: more than a fixed half second of retries survives.
          if (failures < 4) {
            failures++;
            throw new SkillboxError("STORE_UNAVAILABLE", "PostgreSQL at db:5432 is unreachable: restarting");
          }
          return record.store.finish(claim, outcome);
        },
      }),
      prefix,
      leaseMs: 60_000,
      run: async (claim) => success(claim, "kept"),
    });
    const [id] = await submit(record.store, queue);
    await expect.poll(() => reports.map((report) => report.result), WAIT).toEqual(["committed"]);
    expect(failures).toBe(4);
    expect((await record.store.get(id!))?.output).toBe("kept");
  });

  it("gives a failing commit up once the lease runs out", async () => {
    const record = await openRecord(kind);
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    let attempts = 0;
    const { reports } = await startWorker({
      store: overriding(record.store, {
        finish: async () => {
          attempts++;
          throw new SkillboxError("STORE_UNAVAILABLE", "PostgreSQL at db:5432 is unreachable: gone");
        },
      }),
      prefix,
      leaseMs: 1500,
      run: async (claim) => success(claim, "lost"),
    });
    const [id] = await submit(record.store, queue);
    await expect.poll(() => reports.map((report) => report.result), WAIT).toEqual(["commit-failed"]);
    expect(attempts).toBeGreaterThan(0);
    // Still running in the record: its lease expiry hands it to recovery.
    expect((await record.store.get(id!))?.status).toBe("running");
  });

  it("stops a run cancelled between its claim's commit and its start", async () => {
    const record = await openRecord(kind);
    const other = await record.another();
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    let cancelTold: (() => void) | undefined;
    const { reports } = await startWorker({
      store: overriding(record.store, {
        subscribe: (listener) =>
          record.store.subscribe((notice) => {
            listener(notice);
            if (notice.type === "cancel") cancelTold?.();
          }),
        claim: async (options) => {
          const result = await record.store.claim(options);
          if (result.kind === "claimed") {
            // The cancel commits and its notice reaches the worker before the claim's answer does.
            const told = new Promise<void>((resolve) => {
              cancelTold = resolve;
            });
            const cancel = await other.requestCancel({ id: options.executionId, reason: "changed my mind" });
            expect(cancel.kind).toBe("requested");
            await told;
          }
          return result;
        },
      }),
      prefix,
      // Renewals every 200 s: only the notice can stop the run within the test.
      leaseMs: 600_000,
      run: async (claim, { signal }) => {
        await watchStop(signal, () => {});
        return stopped(claim, signal);
      },
    });
    const [id] = await submit(record.store, queue);
    await expect.poll(() => reports.map((report) => report.result), WAIT).toEqual(["committed"]);
    expect(await record.store.get(id!)).toMatchObject({
      status: "cancelled",
      error: { code: "CANCELLED", message: "changed my mind" },
    });
  });

  it("holds no more jobs than its concurrency across its queues: the rest go to other workers", async () => {
    const record = await openRecord(kind);
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    const releases: (() => void)[] = [];
    const run = async (claim: ExecutionClaim) => {
      await new Promise<void>((resolve) => releases.push(resolve));
      return success(claim, null);
    };
    const queues = ["default", "sandbox"];
    const a = await startWorker({ store: record.store, prefix, queues, concurrency: 2, workerId: "a", run });
    await submit(record.store, queue, 3);
    await submit(record.store, queue, 3, { queue: "sandbox" });
    await expect.poll(() => a.worker.running, WAIT).toBe(2);
    const b = await startWorker({
      store: await record.another(),
      prefix,
      queues,
      concurrency: 8,
      workerId: "b",
      run,
    });
    // Worker a locks no job it cannot run yet: b gets all four left.
    await expect.poll(() => b.worker.running, WAIT).toBe(4);
    expect(a.worker.running).toBe(2);
    await expect
      .poll(() => {
        for (const release of releases.splice(0)) release();
        return a.reports.length + b.reports.length;
      }, WAIT)
      .toBe(6);
  });
});
