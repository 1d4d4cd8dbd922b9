import type { ExecutionClaim, ExecutionRecordStore, SkillLogger } from "@skillbox/core";
import type { ClaimingWorkerJobReport } from "./claiming-worker-options.js";
import type { DatabaseClock } from "./database-clock.js";
import { errorMessage } from "./error-message.js";
import type { RunResult } from "./execution-runner.js";

/** Options of {@link commitRunResult}. */
export interface CommitRunResultOptions {
  store: ExecutionRecordStore;
  clock: DatabaseClock;
  logger: SkillLogger;
  claim: ExecutionClaim;
  result: RunResult;
  /** When the claim's lease runs out (database clock): retries stop before it. */
  leaseExpiresAt: number;
  /** Whether to stop retrying now (the worker's shutdown grace ran out). */
  abandoned(): boolean;
}

/**
 * A commit the database fails (not one it refuses) is tried again, waiting this long first and
 * twice as long each time up to {@link RETRY_MOST_MS}.
 */
const RETRY_FIRST_MS = 100;
const RETRY_MOST_MS = 2_000;

/**
 * Writes a finished run's outcome (or its pause) under its claim, trying again when the database
 * fails for as long as the claim's lease holds: a finished run is worth the wait, and only past
 * the lease may another worker take the execution over. Resolves with what came of it:
 * `committed` / `paused`, `refused` (the claim was no longer current: the newer outcome stands),
 * or `commit-failed` (the lease expiry recovers the execution).
 */
export async function commitRunResult(
  options: CommitRunResultOptions,
): Promise<Extract<ClaimingWorkerJobReport["result"], "committed" | "paused" | "refused" | "commit-failed">> {
  const { store, claim, result, logger } = options;
  const { executionId } = claim;
  for (let retryMs = RETRY_FIRST_MS; ; retryMs = Math.min(retryMs * 2, RETRY_MOST_MS)) {
    try {
      const written =
        result.kind === "paused"
          ? await store.pause(claim, {
              approval: result.approval,
              approvalTimeoutMs: result.approvalTimeoutMs,
              attempts: result.attempts,
            })
          : await store.finish(claim, result.outcome);
      if (!written) {
        logger.warn("a run's claim was no longer current at its commit; the newer outcome stands", {
          executionId,
          fence: claim.fence,
        });
      }
      return written ? (result.kind === "paused" ? "paused" : "committed") : "refused";
    } catch (error) {
      // The next try must start before the lease runs out, or it could overwrite a newer claim's run.
      if (options.abandoned() || options.clock.msUntil(options.leaseExpiresAt) <= retryMs) {
        logger.error("could not commit a run's outcome; the execution is recovered once its lease expires", {
          executionId,
          error: errorMessage(error),
        });
        return "commit-failed";
      }
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  }
}
