import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
  ExecutionClaim,
  ExecutionRecordStore,
  FinalOutcome,
  QueuedExecutionRecord,
} from "@skillbox/core";
import { createConsoleLogger, createSqliteRecordStore } from "@skillbox/core";
import { createExecutionId } from "@skillbox/core/internal";
import {
  ClaimingWorker,
  type ClaimingWorkerJobReport,
  type ClaimingWorkerOptions,
  createPostgresRecordStore,
  ExecutionJobQueue,
  RecordSweeper,
  type RecordSweeperOptions,
  type RunResult,
} from "@skillbox/distributed";
import { type RunningPostgres, startPostgresCluster } from "@skillbox/test-helpers/postgres-cluster";
import { type RunningRedis, startRedisServer } from "@skillbox/test-helpers/redis-server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

const WAIT = { timeout: 20_000, interval: 20 } as const;

let redis: RunningRedis;
let postgres: RunningPostgres;
let databases = 0;
let directory: string;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  [redis, postgres] = await Promise.all([startRedisServer(), startPostgresCluster()]);
  directory = await mkdtemp(join(tmpdir(), "skillbox-sweeper-"));
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  await Promise.all([redis?.stop(), postgres?.stop()]);
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

/** The shared record's two implementations; every test runs on both. */
const RECORD_KINDS = ["postgres", "sqlite"] as const;
type RecordKind = (typeof RECORD_KINDS)[number];

/**
 * A fresh shared record: a PostgreSQL database of the file's cluster, or a SQLite file. Every
 * "host" of a test opens it as its own store (`another()`).
 */
async function openRecord(
  kind: RecordKind,
): Promise<{ store: ExecutionRecordStore; another(): Promise<ExecutionRecordStore> }> {
  const path = join(directory, `${createExecutionId()}.db`);
  const url = kind === "postgres" ? postgres.createDatabase(`records_${process.pid}_${++databases}`) : "";
  const open = async () => {
    const store =
      kind === "postgres"
        ? createPostgresRecordStore({ url, pool: { max: 4 } })
        : createSqliteRecordStore({ path, pollIntervalMs: 20 });
    closers.push(() => store.close());
    await store.migrate();
    return store;
  };
  return { store: await open(), another: open };
}

function queuedRecord(overrides: Partial<QueuedExecutionRecord> = {}): QueuedExecutionRecord {
  return {
    id: createExecutionId(),
    skillId: "skill-echo-1",
    skillName: "echo",
    skillVersion: "1.0.0",
    contentHash: "sha256:echo-1",
    queue: "default",
    apiKeyId: "owner-a",
    sessionId: null,
    parentExecutionId: null,
    idempotencyKey: null,
    auditedInputJson: '{"n":1}',
    rawInputJson: '{"n":1}',
    inputHash: null,
    optionsJson: "{}",
    deadlineAt: null,
    rerunnable: false,
    ...overrides,
  };
}

/** Records executions as a host does: `queued` in the record, then their jobs added. */
async function submit(
  store: ExecutionRecordStore,
  queue: ExecutionJobQueue,
  count = 1,
  overrides: Partial<QueuedExecutionRecord> = {},
): Promise<string[]> {
  const records = Array.from({ length: count }, () => queuedRecord(overrides));
  for (const record of records) expect((await store.insertQueued(record)).inserted).toBe(true);
  await queue.add(
    records.map((record) => ({
      executionId: record.id,
      queue: record.queue,
      contentHash: record.contentHash,
    })),
  );
  await store.markEnqueued(records.map((record) => record.id));
  return records.map((record) => record.id);
}

async function openQueue(prefix: string): Promise<ExecutionJobQueue> {
  const queue = await ExecutionJobQueue.open({ url: redis.url, prefix });
  closers.push(() => queue.close());
  return queue;
}

function uniquePrefix(): string {
  return `t-${createExecutionId().slice(-12)}`;
}

async function startWorker(
  options: Partial<ClaimingWorkerOptions> & Pick<ClaimingWorkerOptions, "store" | "run" | "prefix">,
): Promise<{ worker: ClaimingWorker; reports: ClaimingWorkerJobReport[] }> {
  const reports: ClaimingWorkerJobReport[] = [];
  const worker = new ClaimingWorker({
    url: redis.url,
    queues: ["default"],
    concurrency: 2,
    describe: () => [{ name: "echo", version: "1.0.0", contentHash: "sha256:echo-1" }],
    onJob: (report) => reports.push(report),
    ...options,
  });
  await worker.start();
  closers.push(() => worker.close({ graceMs: 1000 }));
  return { worker, reports };
}

function successOutcome(claim: ExecutionClaim, output: unknown): FinalOutcome {
  return {
    status: "success",
    outputJson: JSON.stringify(output),
    error: null,
    attempts: claim.attempts + 1,
    durationMs: 1,
    traceId: null,
    spanId: null,
  };
}

function success(claim: ExecutionClaim, output: unknown): RunResult {
  return { kind: "final", outcome: successOutcome(claim, output) };
}

function gate(): { open(): void; opened: Promise<void> } {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

function count(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

/** A sweeper for one "host", closed after the test. */
function startSweeper(options: RecordSweeperOptions): RecordSweeper {
  const sweeper = new RecordSweeper({ intervalMs: 50, staleAfterMs: 200, logger: quiet, ...options });
  sweeper.start();
  closers.push(() => sweeper.close());
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
    closers.push(() => sweeper.close());
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
    await redis.restart();
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
    closers.push(() => unreachable.close());
    const failing = new RecordSweeper({ store: record.store, queue: unreachable, staleAfterMs: 0, logger });
    closers.push(() => failing.close());
    expect(await failing.sweep()).toMatchObject({ readded: 0, failures: 1 });
    expect(warnings).toContain("could not add stale queued executions again");

    const prefix = uniquePrefix();
    const queue = await openQueue(prefix);
    const working = new RecordSweeper({ store: record.store, queue, staleAfterMs: 0, logger });
    closers.push(() => working.close());
    expect(await working.sweep()).toMatchObject({ readded: 1, failures: 0 });
    expect((await queue.depth("default")).waiting).toBe(1);
  });
});
