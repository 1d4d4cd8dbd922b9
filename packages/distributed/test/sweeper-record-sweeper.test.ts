import { createConsoleLogger, type ExecutionClaim } from "@skillbox/core";
import { ExecutionJobQueue, RecordSweeper, type RecordSweeperOptions } from "@skillbox/distributed";
import { describe, expect, it } from "vitest";
import {
  count,
  gate,
  queuedRecord,
  RECORD_KINDS,
  submit,
  success,
  uniquePrefix,
  useQueueFixture,
  WAIT,
} from "./queue-fixture.js";

const fixture = useQueueFixture();
const { openRecord, openQueue, startWorker, onClose } = fixture;

/** A sweeper for one "host", closed after the test. */
function startSweeper(options: RecordSweeperOptions): RecordSweeper {
  const sweeper = new RecordSweeper({ intervalMs: 50, staleAfterMs: 200, logger: quiet, ...options });
  sweeper.start();
  onClose(() => sweeper.close());
  return sweeper;
}

const quiet = createConsoleLogger({ level: "error" });

describe.each(RECORD_KINDS)("RecordSweeper (%s record)", (kind) => {
  it("adds the job of a queued execution that never reached the queue; sweepers on two hosts run it once", async () => {
    const record = await openRecord(kind);
    const prefix = uniquePrefix();
    const [queueA, queueB] = [await openQueue(prefix), await openQueue(prefix)];
    const ran: string[] = [];
    const { reports } = await startWorker({
      store: record.store,
      prefix,
      run: async (claim) => {
        ran.push(claim.executionId);
        return success(claim, null);
      },
    });
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      const queued = queuedRecord();
      await record.store.insertQueued(queued);
      ids.push(queued.id);
    }
    startSweeper({ store: record.store, queue: queueA });
    startSweeper({ store: await record.another(), queue: queueB });
    await expect.poll(() => reports.filter((report) => report.result === "committed").length, WAIT).toBe(5);
    expect(count(ran)).toEqual(new Map(ids.map((id) => [id, 1])));
  });

  it("requeues an expired rerunnable execution and adds its job; ends any other interrupted", async () => {
    const record = await openRecord(kind);
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    const [rerunnable, once] = [queuedRecord({ rerunnable: true }), queuedRecord({ rerunnable: false })];
    for (const queued of [rerunnable, once]) {
      await record.store.insertQueued(queued);
      await record.store.markEnqueued([queued.id]);
      // Claimed by a worker that then died: nobody renews the lease.
      const claim = await record.store.claim({
        executionId: queued.id,
        workerId: "worker-dead",
        leaseMs: 100,
      });
      expect(claim.kind).toBe("claimed");
    }
    const ran: ExecutionClaim[] = [];
    const { reports } = await startWorker({
      store: record.store,
      prefix,
      run: async (claim) => {
        ran.push(claim);
        return success(claim, "rerun");
      },
    });
    const sweeper = new RecordSweeper({ store: record.store, queue, staleAfterMs: 60_000, logger: quiet });
    onClose(() => sweeper.close());
    const swept = { requeued: 0, ended: 0 };
    await expect
      .poll(async () => {
        const report = await sweeper.sweep();
        swept.requeued += report.requeued;
        swept.ended += report.ended;
        return swept;
      }, WAIT)
      .toEqual({ requeued: 1, ended: 1 });
    await expect.poll(() => reports.map((report) => report.result), WAIT).toEqual(["committed"]);
    expect(ran.map((claim) => claim.executionId)).toEqual([rerunnable.id]);
    expect(ran[0]?.fence).toBeGreaterThan(1);
    expect((await record.store.get(rerunnable.id))?.output).toBe("rerun");
    expect(await record.store.get(once.id)).toMatchObject({
      status: "interrupted",
      error: { code: "INTERRUPTED" },
    });
  });

  it("re-adds the jobs a restarted Redis lost, and every execution finishes exactly once", async () => {
    const record = await openRecord(kind);
    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    const ran: string[] = [];
    const held = gate();
    const { reports } = await startWorker({
      store: record.store,
      prefix,
      concurrency: 2,
      logger: quiet,
      run: async (claim) => {
        ran.push(claim.executionId);
        await held.opened;
        return success(claim, null);
      },
    });
    const ids = await submit(record.store, queue, 12);
    await expect.poll(() => ran.length, WAIT).toBe(2);
    expect((await queue.depth("default")).waiting).toBe(10);
    await fixture.redis.restart();
    startSweeper({ store: record.store, queue });
    held.open();
    await expect
      .poll(
        async () =>
          (await Promise.all(ids.map((id) => record.store.get(id)))).map((execution) => execution?.status),
        {
          ...WAIT,
          timeout: 25_000,
        },
      )
      .toEqual(ids.map(() => "success"));
    expect(count(ran)).toEqual(new Map(ids.map((id) => [id, 1])));
    expect(reports.filter((report) => report.result === "committed")).toHaveLength(12);
  });

  it("logs a queue that cannot take jobs and never throws; the rows stay for the next sweep", async () => {
    const record = await openRecord(kind);
    const queued = queuedRecord();
    await record.store.insertQueued(queued);
    const warnings: string[] = [];
    const logger = { ...quiet, warn: (message: string) => warnings.push(message) };
    // Nothing listens on port 1: every add fails.
    const unreachable = new ExecutionJobQueue({ url: "redis://127.0.0.1:1", logger });
    onClose(() => unreachable.close());
    const failing = new RecordSweeper({ store: record.store, queue: unreachable, staleAfterMs: 0, logger });
    onClose(() => failing.close());
    expect(await failing.sweep()).toMatchObject({ readded: 0, failures: 1 });
    expect(warnings).toContain("could not add stale queued executions again");

    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    const working = new RecordSweeper({ store: record.store, queue, staleAfterMs: 0, logger });
    onClose(() => working.close());
    expect(await working.sweep()).toMatchObject({ readded: 1, failures: 0 });
    expect((await queue.depth("default")).waiting).toBe(1);
  });
});
