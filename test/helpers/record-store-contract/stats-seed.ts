import type { ExecutionRecordStore, ExecutionStatus, QueuedExecutionRecord } from "@skillbox/core";
import { expect } from "vitest";
import { claimOf, insert, NOTICE_WAIT, OTHER_OWNER } from "./fixture.js";

// The executions the statistics cases (stats.ts) seed, and the expectations they work out from them.

/** How a seeded execution ends: left queued, left running, or finished with a status and a duration. */
export type Ending = "queued" | "running" | { status: ExecutionStatus; durationMs: number | null };

/** A seeded execution and what the store stamped. */
export interface Seeded {
  id: string;
  apiKeyId: string;
  skillId: string;
  skillName: string;
  status: ExecutionStatus;
  /** `created_at` by the database clock, ms. */
  createdAt: number;
}

export const ECHO_1 = { skillId: "skill-echo-1", skillName: "echo", skillVersion: "1.0.0" };
export const ECHO_2 = { skillId: "skill-echo-2", skillName: "echo", skillVersion: "2.0.0" };
export const REVERSE = { skillId: "skill-reverse-1", skillName: "reverse", skillVersion: "1.0.0" };

/**
 * Inserts executions one after another, each once the database clock has passed the previous
 * one's creation (so every `created_at` differs and `[since, until)` bounds can sit on a row), and
 * ends each through claim/finish as `ending` says.
 */
export class Seeder {
  readonly seeded: Seeded[] = [];

  constructor(private readonly store: ExecutionRecordStore) {}

  async add(overrides: Partial<QueuedExecutionRecord>, ending: Ending): Promise<Seeded> {
    const previous = this.seeded.at(-1)?.createdAt;
    if (previous !== undefined) {
      await expect.poll(async () => (await this.store.now()) > previous, NOTICE_WAIT).toBe(true);
    }
    const record = await insert(this.store, overrides);
    let status: ExecutionStatus = "queued";
    if (ending !== "queued") {
      const claim = await claimOf(this.store, record.id);
      status = "running";
      if (ending !== "running") {
        const finished = await this.store.finish(claim, {
          status: ending.status,
          outputJson: ending.status === "success" ? JSON.stringify({ ok: true }) : null,
          error:
            ending.status === "success" ? null : { code: "HANDLER_ERROR", message: "failed", dataJson: null },
          attempts: 1,
          durationMs: ending.durationMs,
          traceId: null,
          spanId: null,
        });
        expect(finished).toBe(true);
        status = ending.status;
      }
    }
    const execution = await this.store.get(record.id);
    if (execution === undefined) throw new Error(`seeded ${record.id} is not there`);
    const entry = {
      id: record.id,
      apiKeyId: record.apiKeyId,
      skillId: record.skillId,
      skillName: record.skillName,
      status,
      createdAt: Date.parse(execution.createdAt),
    };
    this.seeded.push(entry);
    return entry;
  }

  /** The newest creation among `entries`, as the statistics report it. */
  static newest(entries: readonly Seeded[]): string {
    return new Date(Math.max(...entries.map((entry) => entry.createdAt))).toISOString();
  }
}

export const success = (durationMs: number) => ({ status: "success" as const, durationMs });

/**
 * The owner's mix the statistics cases read: echo 1.0.0 with six successes, an error, a
 * cancellation without a duration, one queued and one running; echo 2.0.0 with one success;
 * reverse on both sides of the last bound; and another owner's echo runs that must never count.
 */
export async function seedMix(store: ExecutionRecordStore): Promise<Seeder> {
  const seeder = new Seeder(store);
  for (const durationMs of [40, 10, 30, 20, 0.5, 2]) await seeder.add(ECHO_1, success(durationMs));
  await seeder.add(ECHO_1, { status: "error", durationMs: 1000 });
  await seeder.add(ECHO_1, { status: "cancelled", durationMs: null });
  await seeder.add({ ...ECHO_2 }, success(5000));
  await seeder.add(REVERSE, success(60_000));
  await seeder.add({ ...ECHO_1, apiKeyId: OTHER_OWNER }, success(7));
  await seeder.add(REVERSE, success(60_001));
  await seeder.add({ ...ECHO_1, apiKeyId: OTHER_OWNER }, success(7));
  await seeder.add(ECHO_1, "running");
  await seeder.add(ECHO_1, "queued");
  return seeder;
}

/** The owner's counts per status in each bucket of `[since, until)`, computed from what was seeded. */
export function expectedBuckets(
  seeded: readonly Seeded[],
  options: { owner: string; since: number; until: number; bucketMs: number; skill?: string },
): Array<Partial<Record<ExecutionStatus, number>>> {
  const count = Math.ceil((options.until - options.since) / options.bucketMs);
  const buckets: Array<Partial<Record<ExecutionStatus, number>>> = Array.from({ length: count }, () => ({}));
  for (const entry of seeded) {
    if (entry.apiKeyId !== options.owner) continue;
    if (options.skill !== undefined && entry.skillName !== options.skill) continue;
    if (entry.createdAt < options.since || entry.createdAt >= options.until) continue;
    const bucket = buckets[Math.floor((entry.createdAt - options.since) / options.bucketMs)] ?? {};
    bucket[entry.status] = (bucket[entry.status] ?? 0) + 1;
  }
  return buckets;
}

export function total(buckets: readonly { statuses: Partial<Record<ExecutionStatus, number>> }[]): number {
  return buckets.reduce(
    (sum, bucket) => sum + Object.values(bucket.statuses).reduce((inner, count) => inner + (count ?? 0), 0),
    0,
  );
}

/** Counts in the documented order of statuses, as the store answers them. */
export function inOrder(
  statuses: Partial<Record<ExecutionStatus, number>>,
): Partial<Record<ExecutionStatus, number>> {
  const order: ExecutionStatus[] = [
    "queued",
    "awaiting_approval",
    "pending",
    "running",
    "success",
    "error",
    "timeout",
    "cancelled",
    "denied",
    "rejected",
    "interrupted",
  ];
  const ordered: Partial<Record<ExecutionStatus, number>> = {};
  for (const status of order) if (statuses[status] !== undefined) ordered[status] = statuses[status];
  return ordered;
}
