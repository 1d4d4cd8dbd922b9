import { setTimeout as sleep } from "node:timers/promises";
import { SkillboxError } from "../errors/skillbox-error.js";
import { EXECUTION_STATUSES, type ExecutionStatus, type Skill, type SkillExecution } from "../types.js";
import type { ExecutionStore } from "./execution-store.js";

/** Every status but the two of an execution still under way. */
const FINAL_STATUSES: ReadonlySet<ExecutionStatus> = new Set(
  EXECUTION_STATUSES.filter((status) => status !== "pending" && status !== "running"),
);

/** How often a row being run by another process is re-read while waiting for it. */
const POLL_INTERVAL_MS = 25;

/**
 * Makes `execute()` with an idempotency key run at most once per owner and key: a repeat gets
 * the stored execution; a duplicate arriving while the first is in flight waits for it — in
 * this process through a shared promise, across processes by polling the row (the unique index
 * on owner + key decides which process runs).
 */
export class IdempotencyGate {
  private readonly inFlight = new Map<string, Promise<SkillExecution>>();

  constructor(private readonly store: ExecutionStore) {}

  async run(
    skill: Skill,
    owner: string,
    key: string,
    signal: AbortSignal | undefined,
    execute: () => Promise<SkillExecution>,
  ): Promise<SkillExecution> {
    const mapKey = `${owner}\u0000${key}`;
    const running = this.inFlight.get(mapKey);
    if (running !== undefined) return sameSkill(await running, skill, key);
    const stored = this.store.findByIdempotencyKey(owner, key);
    if (stored !== undefined) return sameSkill(await this.waitUntilFinal(stored, signal), skill, key);
    const promise = execute().catch((error: unknown) => {
      // Another process inserted the same key first: wait for its execution instead.
      const winner = this.store.findByIdempotencyKey(owner, key);
      if (winner === undefined) throw error;
      return this.waitUntilFinal(winner, signal);
    });
    this.inFlight.set(mapKey, promise);
    try {
      return sameSkill(await promise, skill, key);
    } finally {
      this.inFlight.delete(mapKey);
    }
  }

  private async waitUntilFinal(
    execution: SkillExecution,
    signal: AbortSignal | undefined,
  ): Promise<SkillExecution> {
    let current = execution;
    while (!FINAL_STATUSES.has(current.status)) {
      await sleep(POLL_INTERVAL_MS, undefined, signal ? { signal } : undefined).catch(() => {
        throw new SkillboxError("CANCELLED", `Cancelled while waiting for execution ${execution.id}`);
      });
      current = this.store.get(execution.id) ?? current;
    }
    return current;
  }
}

function sameSkill(execution: SkillExecution, skill: Skill, key: string): SkillExecution {
  if (execution.skillName !== skill.name) {
    throw new SkillboxError(
      "IDEMPOTENCY_CONFLICT",
      `Idempotency key "${key}" was already used for ${execution.skillName}, not ${skill.name}; use a new key`,
      { data: { executionId: execution.id } },
    );
  }
  return execution;
}
