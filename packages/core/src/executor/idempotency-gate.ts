import { setTimeout as sleep } from "node:timers/promises";
import { SkillboxError } from "../errors/skillbox-error.js";
import { isFinalExecutionStatus, type Skill, type SkillExecution } from "../types.js";
import type { ExecutionStore, IdempotentExecution } from "./execution-store.js";
import { hashInput } from "./hash-input.js";
import { linkSignals } from "./link-signals.js";
import { resolveRetryPolicy } from "./retry-policy.js";

/** The first re-read of a row run by another process; each later one waits twice as long… */
const FIRST_POLL_MS = 25;
/** …up to this, so hundreds of abandoned waits cost next to nothing. */
const MAX_POLL_MS = 1_000;
/** The longest delay a Node timer holds. */
const MAX_TIMER_MS = 2_147_483_647;

/** Options of {@link IdempotencyGate}. */
export interface IdempotencyGateOptions {
  /** The per-attempt timeout `skill` gets on this host (its own, the default, the ceiling). */
  attemptTimeoutMs(skill: Skill): number;
  /** The host's overall deadline across attempts, if it has one. */
  totalTimeoutMs?: number;
  /** Added to a first execution's longest run: time for a dead runner's lease to lapse. */
  graceMs: number;
}

/** One call of {@link IdempotencyGate.run}. */
export interface IdempotentRequest {
  skill: Skill;
  /** The caller's owner id: keys are per owner. */
  owner: string;
  key: string;
  input: unknown;
  /** Ends this caller's wait for another caller's execution. */
  signal: AbortSignal | undefined;
  /** Runs the execution, storing `inputHash` with its row. */
  execute(inputHash: string | null): Promise<SkillExecution>;
}

interface InFlight {
  /** Settles with this process's execution, or with the row another process inserted first. */
  promise: Promise<SkillExecution | IdempotentExecution>;
  skillName: string;
  inputHash: string | null;
  startedAt: number;
}

/** What a repeat is checked against before it may share a first execution's result. */
export interface FirstRequest {
  /** Looked up only for a conflict's message: an in-flight first request may have no row yet. */
  executionId(): string | undefined;
  skillName: string;
  inputHash: string | null;
}

/**
 * Makes `execute()` with an idempotency key run at most once per owner and key: a repeat with the
 * same skill and input gets the stored execution (another skill or input is
 * `IDEMPOTENCY_CONFLICT`); a duplicate arriving while the first is in flight waits for it — in
 * this process through a shared promise, across processes by polling the row (the unique index on
 * owner + key decides which process runs). A wait ends with the first execution, when the
 * waiting caller's signal aborts, when the runner of the first execution turns out dead (its row
 * is then marked `interrupted` and returned), or with `TIMEOUT` once the first execution has
 * outlived every timeout its skill allows.
 */
export class IdempotencyGate {
  private readonly inFlight = new Map<string, InFlight>();

  constructor(
    private readonly store: ExecutionStore,
    private readonly options: IdempotencyGateOptions,
  ) {}

  /**
   * Runs `request.execute` (given the hash of the input to store with the row) unless an
   * execution with this owner and key exists or is in flight. `request.signal` ends this
   * caller's wait for another caller's execution; it never cancels that execution.
   */
  async run(request: IdempotentRequest): Promise<SkillExecution> {
    const { skill, owner, key, signal } = request;
    const inputHash = hashInput(request.input, this.store.inputHashKey);
    const mapKey = `${owner}\u0000${key}`;
    const running = this.inFlight.get(mapKey);
    if (running !== undefined) {
      checkSameRequest(
        { ...running, executionId: () => this.store.findByIdempotencyKey(owner, key)?.execution.id },
        skill,
        inputHash,
        key,
      );
      const deadline = running.startedAt + this.longestRunMs(skill);
      const settled = await this.within(running.promise, signal, deadline, key);
      return this.afterFirst(settled, request, inputHash);
    }
    const stored = this.store.findByIdempotencyKey(owner, key);
    if (stored !== undefined) return this.afterFirst(stored, request, inputHash);
    const entry: InFlight = {
      promise: request.execute(inputHash).catch((error: unknown) => {
        // Another process inserted the same key first: its row is the first request.
        const winner = this.store.findByIdempotencyKey(owner, key);
        if (winner === undefined) throw error;
        return winner;
      }),
      skillName: skill.name,
      inputHash,
      startedAt: Date.now(),
    };
    this.inFlight.set(mapKey, entry);
    const forget = () => {
      if (this.inFlight.get(mapKey) === entry) this.inFlight.delete(mapKey);
    };
    entry.promise.then(forget, forget);
    // Not raced with the signal: the caller's own execution reacts to it and settles, and the
    // executor must not lose track of an execution still writing its row.
    return this.afterFirst(await entry.promise, request, inputHash);
  }

  /** The execution a caller gets once the first request is known: its own, or the stored one. */
  private async afterFirst(
    first: SkillExecution | IdempotentExecution,
    request: IdempotentRequest,
    inputHash: string | null,
  ): Promise<SkillExecution> {
    // This process's own execution (or one it shared): checked when the request came in.
    if (!("execution" in first)) return first;
    const { execution } = first;
    const { skill, key } = request;
    checkSameRequest(
      { executionId: () => execution.id, skillName: execution.skillName, inputHash: first.inputHash },
      skill,
      inputHash,
      key,
    );
    const deadline = Date.parse(execution.createdAt) + this.longestRunMs(skill);
    return this.waitUntilFinal(execution, request.signal, deadline, key);
  }

  /**
   * How long after it started a first execution of `skill` must have ended: every attempt at
   * its full timeout, the longest retry delays, and the grace for a dead runner to be noticed.
   */
  private longestRunMs(skill: Skill): number {
    const policy = resolveRetryPolicy(skill, {});
    const attempts = Math.max(1, policy.maxAttempts);
    let running = attempts * this.options.attemptTimeoutMs(skill);
    for (let retry = 1; retry < attempts; retry++) {
      const base = Math.min(
        policy.maxDelayMs,
        policy.initialDelayMs * policy.backoffCoefficient ** (retry - 1),
      );
      running += base * (1 + policy.jitter);
    }
    if (this.options.totalTimeoutMs !== undefined) running = Math.min(running, this.options.totalTimeoutMs);
    return running + this.options.graceMs;
  }

  /** `promise`, unless `signal` aborts or `deadline` passes first. */
  private async within<T>(
    promise: Promise<T>,
    signal: AbortSignal | undefined,
    deadline: number,
    key: string,
  ): Promise<T> {
    if (signal?.aborted) throw cancelledWait(undefined, key);
    const settled = new AbortController();
    // Linked, not AbortSignal.any: `signal` may be the host's shutdown signal, which lives on.
    const stop = linkSignals([signal, settled.signal]);
    const giveUp = async (): Promise<never> => {
      try {
        // A timer holds at most 2^31 - 1 ms, so a far deadline is slept towards in steps.
        for (let remaining = deadline - Date.now(); remaining > 0; remaining = deadline - Date.now()) {
          await sleep(Math.min(remaining, MAX_TIMER_MS), undefined, { signal: stop.signal });
        }
      } catch {
        if (signal?.aborted) throw cancelledWait(undefined, key);
        // `promise` settled first: this race is over.
        return new Promise<never>(() => {});
      }
      throw timedOutWait(undefined, key);
    };
    try {
      return await Promise.race([promise, giveUp()]);
    } finally {
      settled.abort();
      stop.unlink();
    }
  }

  private async waitUntilFinal(
    execution: SkillExecution,
    signal: AbortSignal | undefined,
    deadline: number,
    key: string,
  ): Promise<SkillExecution> {
    let current = execution;
    let delay = FIRST_POLL_MS;
    while (!isFinalExecutionStatus(current.status)) {
      if (signal?.aborted) throw cancelledWait(execution.id, key);
      // A dead runner never finishes its row: recover it now instead of waiting for a sweep.
      if (this.store.recoverIfOrphaned(execution.id)) {
        current = this.store.get(execution.id) ?? current;
        continue;
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw timedOutWait(execution.id, key);
      await sleep(Math.min(delay, remaining), undefined, signal ? { signal } : undefined).catch(() => {
        throw cancelledWait(execution.id, key);
      });
      delay = Math.min(delay * 2, MAX_POLL_MS);
      current = this.store.get(execution.id) ?? current;
    }
    return current;
  }
}

function describeWait(executionId: string | undefined, key: string): string {
  return executionId === undefined
    ? `the execution with idempotency key "${key}"`
    : `execution ${executionId} (idempotency key "${key}")`;
}

function cancelledWait(executionId: string | undefined, key: string): SkillboxError {
  return new SkillboxError(
    "CANCELLED",
    `Stopped waiting for ${describeWait(executionId, key)}: the wait was cancelled; the execution itself goes on`,
    { data: { executionId, idempotencyKey: key } },
  );
}

function timedOutWait(executionId: string | undefined, key: string): SkillboxError {
  return new SkillboxError(
    "TIMEOUT",
    `Gave up waiting for ${describeWait(executionId, key)}: it is still running after every timeout its skill allows; ` +
      "repeat the request with the same key later to get its result",
    { data: { executionId, idempotencyKey: key } },
  );
}

/** Throws IDEMPOTENCY_CONFLICT unless a repeat names the first request's skill and input. */
export function checkSameRequest(
  first: FirstRequest,
  skill: Skill,
  inputHash: string | null,
  key: string,
): void {
  const sameSkill = first.skillName === skill.name;
  // A missing hash (rows from before hashes, inputs JSON cannot write) cannot be compared.
  const sameInput = first.inputHash === null || inputHash === null || first.inputHash === inputHash;
  if (sameSkill && sameInput) return;
  const executionId = first.executionId();
  const data = executionId === undefined ? undefined : { executionId };
  if (!sameSkill) {
    throw new SkillboxError(
      "IDEMPOTENCY_CONFLICT",
      `Idempotency key "${key}" was already used for ${first.skillName}, not ${skill.name}; use a new key`,
      { data },
    );
  }
  throw new SkillboxError(
    "IDEMPOTENCY_CONFLICT",
    `Idempotency key "${key}" was already used with a different input` +
      `${executionId === undefined ? "" : ` (execution ${executionId})`}; ` +
      "repeat the request with exactly the same input to get its result, or use a new key for a new request",
    { data },
  );
}
