import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { ExecuteOptions, Skill, SkillLogger } from "../types.js";
import type { ExecutionTimeouts } from "./execution-timeouts.js";
import type { LazyAbortSignal } from "./lazy-abort-signal.js";
import { linkSignals } from "./link-signals.js";
import { isRetryable, resolveRetryPolicy, retryDelay } from "./retry-policy.js";
import { type AttemptCancellation, runAttempt } from "./run-attempt.js";

/** What {@link runWithRetries} runs, and under which limits. */
export interface RetriedRun {
  skill: Skill;
  /** The call's options: its `signal`, `retry`, `timeoutMs` and `totalTimeoutMs`. */
  options: ExecuteOptions;
  timeouts: ExecutionTimeouts;
  /** `performance.now()` when the execution started: the overall deadline counts from it. */
  startedAt: number;
  /** Counts the attempts made, read by the caller even when the run fails. */
  attempts: { count: number };
  /** The host's shutdown: its signal cancels the run, after a grace period of `graceMs()`. */
  shutdown: { signal: AbortSignal; graceMs(): number };
  logger: SkillLogger;
  /** Runs one attempt; `abort` is what the handler sees as `ctx.signal`. */
  invoke(attempt: number, abort: LazyAbortSignal): Promise<unknown>;
}

/**
 * Runs the attempts of one execution: each bounded by its timeout (see {@link ExecutionTimeouts})
 * and the overall deadline, cancelled by the caller's signal or the host's shutdown, retried
 * with backoff per the skill's retry policy. Resolves with the output of the attempt that
 * succeeded; rejects with the error of the last one.
 */
export async function runWithRetries(run: RetriedRun): Promise<unknown> {
  const { skill, options, attempts, shutdown } = run;
  const policy = resolveRetryPolicy(skill, options);
  const attemptTimeout = run.timeouts.attemptTimeout(skill, options);
  const totalTimeoutMs = run.timeouts.totalTimeout(options);
  const deadline = totalTimeoutMs === undefined ? Number.POSITIVE_INFINITY : run.startedAt + totalTimeoutMs;
  const label = `${skill.name}@${skill.version}`;
  const cancellations: AttemptCancellation[] = [
    {
      signal: options.signal,
      error: () =>
        new SkillboxError("CANCELLED", `${label} was cancelled by the caller`, {
          data: { reason: String(options.signal?.reason) },
        }),
    },
    {
      signal: shutdown.signal,
      error: () =>
        new SkillboxError(
          "CANCELLED",
          `${label} was cancelled because the host shut down: it was still running when the ${shutdown.graceMs()} ms shutdown grace period ran out`,
          { data: { reason: "shutdown", graceMs: shutdown.graceMs() } },
        ),
    },
  ];
  for (let attempt = 1; ; attempt++) {
    attempts.count = attempt;
    const remaining = deadline - performance.now();
    const capped = remaining < attemptTimeout.milliseconds;
    try {
      return await runAttempt(
        {
          timeoutMs: capped ? remaining : attemptTimeout.milliseconds,
          timeoutError: () =>
            capped
              ? new SkillboxError(
                  "TIMEOUT",
                  `${label} ran past its overall deadline of ${totalTimeoutMs} ms`,
                  {
                    retryable: false,
                  },
                )
              : new SkillboxError(
                  "TIMEOUT",
                  `${label} attempt ${attempt} timed out after ${attemptTimeout.milliseconds} ms (${attemptTimeout.source})`,
                ),
          cancellations,
        },
        (abort) => run.invoke(attempt, abort),
      );
    } catch (error) {
      if (attempt >= policy.maxAttempts || !isRetryable(error, policy)) throw error;
      const delay = retryDelay(policy, attempt);
      if (performance.now() + delay >= deadline) throw error;
      run.logger.debug("retrying", {
        skill: label,
        attempt,
        delay,
        code: (error as SkillboxError).code,
      });
      const waiting = linkSignals([options.signal, shutdown.signal]);
      await sleep(delay, undefined, { signal: waiting.signal })
        .catch(() => {
          const cancelled = cancellations.find((cancellation) => cancellation.signal?.aborted);
          throw (
            cancelled?.error() ??
            new SkillboxError("CANCELLED", `${label} was cancelled while waiting to retry`)
          );
        })
        .finally(waiting.unlink);
    }
  }
}
