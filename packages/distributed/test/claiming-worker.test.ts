import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
  ExecutionClaim,
  ExecutionRecordStore,
  FinalOutcome,
  QueuedExecutionRecord,
} from "@skillbox/core";
import {
  createSqliteRecordStore,
  type ExecutionApproval,
  executionStatusForCode,
  type SkillboxError,
} from "@skillbox/core";
import { createExecutionId } from "@skillbox/core/internal";
import {
  ClaimingWorker,
  type ClaimingWorkerJobReport,
  type ClaimingWorkerOptions,
  createPostgresRecordStore,
  ExecutionJobQueue,
  type RunResult,
  runStopKind,
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
  directory = await mkdtemp(join(tmpdir(), "skillbox-claiming-"));
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

/** The outcome a run reports once its signal stopped it, as the executor reports one. */
function stopped(claim: ExecutionClaim, signal: AbortSignal): RunResult {
  const reason = signal.reason as SkillboxError;
  return {
    kind: "final",
    outcome: {
      status: executionStatusForCode(reason.code),
      outputJson: null,
      error: { code: reason.code, message: reason.message, dataJson: null },
      attempts: claim.attempts + 1,
      durationMs: 1,
      traceId: null,
      spanId: null,
    },
  };
}

function approvalRequest(): ExecutionApproval {
  return {
    reason: "sends an email",
    requestedBy: "skill",
    requestedAt: new Date().toISOString(),
    expiresAt: null,
    decision: null,
    decidedBy: null,
    decidedAt: null,
    comment: null,
    inputEdited: false,
  };
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
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
    const [id] = await submit(record.store, queue, 1, { deadlineAt: (await record.store.now()) + 1000 });
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
            approval: approvalRequest(),
            expiresAt: null,
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
      ...approvalRequest(),
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
    closers.push(() => evicting.stop());
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

/** The store with `renew` held until `released` resolves (every other method as it is). */
function withHeldRenewals(store: ExecutionRecordStore, released: Promise<void>): ExecutionRecordStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === "renew") {
        return async (...args: Parameters<ExecutionRecordStore["renew"]>) => {
          await released;
          return target.renew(...args);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The store, counting the `finish` calls made through it. */
function countFinishes(store: ExecutionRecordStore): { store: ExecutionRecordStore; finishes(): number } {
  let finishes = 0;
  const counted = new Proxy(store, {
    get(target, property) {
      if (property === "finish") {
        return (...args: Parameters<ExecutionRecordStore["finish"]>) => {
          finishes++;
          return target.finish(...args);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store: counted, finishes: () => finishes };
}
