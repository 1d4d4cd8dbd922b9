import type { ExecutionApproval, ExecutionClaim, FinalOutcome } from "@skillbox/core";

/** What running a claimed execution came to: a final state to commit, or a pause for approval. */
export type RunResult =
  | { kind: "final"; outcome: FinalOutcome }
  | { kind: "paused"; approval: ExecutionApproval; approvalTimeoutMs: number | null; attempts: number };

/** What a run gets besides its claim. */
export interface RunContext {
  /**
   * Aborted when the worker stops the run: its reason is a `SkillboxError` whose `data.stop`
   * says why (`runStopKind(signal)`): cancelled, deadline, lease lost or shutdown.
   */
  signal: AbortSignal;
  /** Stores the run's latest progress (JSON) on the record; never throws, writes are coalesced. */
  reportProgress(progressJson: string): void;
}

/**
 * Runs one claimed execution (the host wires the executor in: `runClaimedExecution`). It should
 * resolve even when stopped — with the outcome the stop means (`cancelled`, `timeout`); a run
 * that throws is committed as an error, never a crash of the worker.
 */
export type ExecutionRunner = (claim: ExecutionClaim, context: RunContext) => Promise<RunResult>;
