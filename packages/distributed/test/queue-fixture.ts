import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
  ExecutionClaim,
  ExecutionRecordStore,
  FinalOutcome,
  QueuedExecutionRecord,
} from "@skillbox/core";
import { createSqliteRecordStore, executionStatusForCode, type SkillboxError } from "@skillbox/core";
import { createExecutionId } from "@skillbox/core/internal";
import {
  ClaimingWorker,
  type ClaimingWorkerJobReport,
  type ClaimingWorkerOptions,
  ExecutionJobQueue,
  type RunResult,
} from "@skillbox/distributed";
import { queuedRecord as contractRecord } from "@skillbox/test-helpers/record-store-contract";
import { type RunningRedis, startRedisServer } from "@skillbox/test-helpers/redis-server";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { usePostgresCluster } from "./postgres-fixture.js";

/** What a poll of the queue tests allows: jobs travel through Redis and the record. */
export const WAIT = { timeout: 20_000, interval: 20 } as const;

/** The shared record's two implementations; the queue tests run on both. */
export const RECORD_KINDS = ["postgres", "sqlite"] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

/** The skill the workers describe and the records name: a job for other code would be refused. */
const ECHO = { name: "echo", version: "1.0.0", contentHash: "sha256:echo-1" } as const;

/** A shared record: the store of the first "host", and `another()` for each further one. */
export interface OpenedRecord {
  store: ExecutionRecordStore;
  another(): Promise<ExecutionRecordStore>;
}

/** What a test file gets from {@link useQueueFixture}; everything it opens is closed after each test. */
export interface QueueFixture {
  /** The file's redis-server (started in `beforeAll`). */
  readonly redis: RunningRedis;
  /** Closes `close` after the test, before what was opened earlier. */
  onClose(close: () => Promise<unknown>): void;
  /** A fresh shared record: a PostgreSQL database of the file's cluster, or a SQLite file. */
  openRecord(kind: RecordKind): Promise<OpenedRecord>;
  /** The job queue under `prefix` on the file's Redis. */
  openQueue(prefix: string): Promise<ExecutionJobQueue>;
  /** A started ClaimingWorker (queue "default", concurrency 2, describing echo) and its job reports. */
  startWorker(
    options: Partial<ClaimingWorkerOptions> & Pick<ClaimingWorkerOptions, "store" | "run" | "prefix">,
  ): Promise<{ worker: ClaimingWorker; reports: ClaimingWorkerJobReport[] }>;
}

/**
 * One redis-server, one PostgreSQL cluster and a scratch folder for the calling test file, and
 * the stores, queues and workers of each test, closed when it ends. Call it at the top level.
 */
export function useQueueFixture(): QueueFixture {
  const postgres = usePostgresCluster();
  let redis: RunningRedis | undefined;
  let directory: string | undefined;
  const closers: (() => Promise<unknown>)[] = [];
  const onClose = (close: () => Promise<unknown>) => {
    closers.push(close);
  };
  beforeAll(async () => {
    redis = await startRedisServer();
    directory = await mkdtemp(join(tmpdir(), "skillbox-queue-"));
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(async () => {
    await redis?.stop();
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
  });
  const started = (): { redis: RunningRedis; directory: string } => {
    if (redis === undefined || directory === undefined)
      throw new Error("the queue fixture starts in beforeAll: use it in a test");
    return { redis, directory };
  };

  return {
    get redis() {
      return started().redis;
    },
    onClose,
    async openRecord(kind) {
      if (kind === "postgres") {
        const database = postgres.freshDatabase();
        onClose(() => database.close());
        return { store: await database.openStore(), another: () => database.openStore() };
      }
      const path = join(started().directory, `${createExecutionId()}.db`);
      const open = async () => {
        const store = createSqliteRecordStore({ path, pollIntervalMs: 20 });
        onClose(() => store.close());
        await store.migrate();
        return store;
      };
      return { store: await open(), another: open };
    },
    async openQueue(prefix) {
      const queue = await ExecutionJobQueue.open({ url: started().redis.url, prefix });
      onClose(() => queue.close());
      return queue;
    },
    async startWorker(options) {
      const reports: ClaimingWorkerJobReport[] = [];
      const worker = new ClaimingWorker({
        url: started().redis.url,
        queues: ["default"],
        concurrency: 2,
        describe: () => [{ ...ECHO }],
        onJob: (report) => reports.push(report),
        ...options,
      });
      await worker.start();
      onClose(() => worker.close({ graceMs: 1000 }));
      return { worker, reports };
    },
  };
}

/** A submitted execution of echo 1.0.0, as the record store contract makes them. */
export function queuedRecord(overrides: Partial<QueuedExecutionRecord> = {}): QueuedExecutionRecord {
  return contractRecord({ contentHash: ECHO.contentHash, ...overrides });
}

/** Records executions as a host does: `queued` in the record, then their jobs added. */
export async function submit(
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

/** A queue prefix no other test uses. */
export function uniquePrefix(): string {
  return `t-${createExecutionId().slice(-12)}`;
}

/** The success outcome of a run of `claim`. */
export function successOutcome(claim: ExecutionClaim, output: unknown): FinalOutcome {
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

/** What a run that succeeded returns to the worker. */
export function success(claim: ExecutionClaim, output: unknown): RunResult {
  return { kind: "final", outcome: successOutcome(claim, output) };
}

/** A promise the test resolves when it chooses (`open()`). */
export function gate(): { open(): void; opened: Promise<void> } {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/** How often each value occurs. */
export function count(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

/** The store with some methods replaced (every other one as it is). */
export function overriding(
  store: ExecutionRecordStore,
  methods: Partial<ExecutionRecordStore>,
): ExecutionRecordStore {
  return new Proxy(store, {
    get(target, property) {
      const replaced = (methods as Record<PropertyKey, unknown>)[property];
      if (replaced !== undefined) return replaced;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The outcome a run reports once its signal stopped it, as the executor reports one. */
export function stopped(claim: ExecutionClaim, signal: AbortSignal): RunResult {
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
