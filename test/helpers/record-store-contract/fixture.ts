import type {
  ClaimResult,
  ExecutionApproval,
  ExecutionClaim,
  ExecutionRecordStore,
  QueuedExecutionRecord,
} from "@skillbox/core";
import { createExecutionId } from "@skillbox/core/internal";
import { expect } from "vitest";

/** One database for one test, as an implementation under the contract opens it. */
export interface RecordStoreFixture {
  /** A migrated store on a fresh, empty database. */
  store: ExecutionRecordStore;
  /**
   * Another migrated store on the same database, as another process (or host) opens it: the
   * cross-instance cases (claims racing, notices from elsewhere) run through it.
   */
  openAnother(): Promise<ExecutionRecordStore>;
  /** Closes `store` and every store {@link openAnother} returned, then deletes the database. */
  cleanup(): Promise<void>;
}

/** How the contract suite gets a fresh database for each test. */
export type OpenRecordStore = () => Promise<RecordStoreFixture>;

/** What a notice wait allows: the SQLite store polls, so a notice takes a poll interval or two. */
export const NOTICE_WAIT = { timeout: 15_000, interval: 20 } as const;

/** The raw input every record carries: it must never show in an audited column or a notice. */
export const RAW_SECRET = "raw-secret-7f3a";
export const RAW_INPUT_JSON = JSON.stringify({ text: "hello", password: RAW_SECRET });
export const AUDITED_INPUT_JSON = JSON.stringify({ text: "hello", password: "[redacted]" });

export const OWNER = "owner-a";
export const OTHER_OWNER = "owner-b";

/** Runs `body` on a fresh database and always cleans up. */
export async function withStore(
  open: OpenRecordStore,
  body: (fixture: RecordStoreFixture) => Promise<void>,
): Promise<void> {
  const fixture = await open();
  try {
    await body(fixture);
  } finally {
    await fixture.cleanup();
  }
}

/** A submitted execution (ids are UUIDv7, made in call order, so "newest first" is well defined). */
export function queuedRecord(overrides: Partial<QueuedExecutionRecord> = {}): QueuedExecutionRecord {
  return {
    id: createExecutionId(),
    skillId: "skill-echo-1",
    skillName: "echo",
    skillVersion: "1.0.0",
    contentHash: "sha256:content-echo-1",
    queue: "default",
    apiKeyId: OWNER,
    sessionId: null,
    parentExecutionId: null,
    idempotencyKey: null,
    auditedInputJson: AUDITED_INPUT_JSON,
    rawInputJson: RAW_INPUT_JSON,
    inputHash: null,
    optionsJson: JSON.stringify({ timeoutMs: 5000 }),
    totalTimeoutMs: null,
    rerunnable: false,
    ...overrides,
  };
}

/** Inserts a record and returns it (failing the test when it was not inserted). */
export async function insert(
  store: ExecutionRecordStore,
  overrides: Partial<QueuedExecutionRecord> = {},
): Promise<QueuedExecutionRecord> {
  const record = queuedRecord(overrides);
  const result = await store.insertQueued(record);
  expect(result.inserted).toBe(true);
  return record;
}

/** Claims `id`, failing the test unless the claim was granted. */
export async function claimOf(
  store: ExecutionRecordStore,
  id: string,
  options: { workerId?: string; leaseMs?: number } = {},
): Promise<ExecutionClaim> {
  const result: ClaimResult = await store.claim({
    executionId: id,
    workerId: options.workerId ?? "worker-1",
    leaseMs: options.leaseMs ?? 60_000,
  });
  if (result.kind !== "claimed")
    throw new Error(`claim of ${id}: expected claimed, got ${JSON.stringify(result)}`);
  return result.claim;
}

/** Waits (by the database's clock) until the lease of `claim` has passed. */
export async function leaseLapsed(store: ExecutionRecordStore, claim: ExecutionClaim): Promise<void> {
  await expect.poll(async () => (await store.now()) > claim.leaseExpiresAt, NOTICE_WAIT).toBe(true);
}

/**
 * Waits (by the database's clock) until the deadline `totalTimeoutMs` after the creation of
 * execution `id` has passed.
 */
export async function deadlinePassed(
  store: ExecutionRecordStore,
  id: string,
  totalTimeoutMs: number,
): Promise<void> {
  const createdAt = Date.parse((await store.get(id))?.createdAt ?? "");
  await expect.poll(async () => (await store.now()) > createdAt + totalTimeoutMs, NOTICE_WAIT).toBe(true);
}

/** Waits (by the database's clock) until the approval of execution `id` has lapsed. */
export async function approvalLapsed(store: ExecutionRecordStore, id: string): Promise<void> {
  const expiresAt = Date.parse((await store.get(id))?.approval?.expiresAt ?? "");
  expect(expiresAt).not.toBeNaN();
  await expect.poll(async () => (await store.now()) > expiresAt, NOTICE_WAIT).toBe(true);
}

/** An approval request waiting for a decision. */
export function pendingApproval(expiresAt: string | null = null): ExecutionApproval {
  return {
    reason: "sends an email",
    requestedBy: "skill",
    requestedAt: new Date().toISOString(),
    expiresAt,
    decision: null,
    decidedBy: null,
    decidedAt: null,
    comment: null,
    inputEdited: false,
  };
}

/** The same request, decided. */
export function decided(
  approval: ExecutionApproval,
  decision: "approved" | "rejected",
  inputEdited = false,
): ExecutionApproval {
  return {
    ...approval,
    decision,
    decidedBy: "approver-1",
    decidedAt: new Date().toISOString(),
    comment: decision === "rejected" ? "not today" : null,
    inputEdited,
  };
}

/** A success outcome for a finish. */
export function successOutcome(output: unknown = { echoed: "hello" }) {
  return {
    status: "success" as const,
    outputJson: JSON.stringify(output),
    error: null,
    attempts: 1,
    durationMs: 12.5,
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "b7ad6b7169203331",
  };
}
