import { performance } from "node:perf_hooks";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { ExecuteOptions, Skill } from "../types.js";
import { CallerCancellation } from "./caller-cancellation.js";
import type { AttemptTimeout, ExecutionTimeouts } from "./execution-timeouts.js";
import type { LazyAbortSignal } from "./lazy-abort-signal.js";
import { isRetryable, resolveRetryPolicy, retryDelay } from "./retry-policy.js";
import {
  type AttemptCancellation,
  type AttemptLimits,
  type CancellationWatcher,
  runAttempt,
} from "./run-attempt.js";

/** What {@link runWithRetries} runs, and under which limits. */
export interface RetriedRun {
  skill: Skill;
  /** The call's options: its `signal`, `retry`, `maxRetries`, `timeoutMs` and `totalTimeoutMs`. */
  options: ExecuteOptions;
  timeouts: ExecutionTimeouts;
  /** `performance.now()` when the execution started: the overall deadline counts from it. */
  startedAt: number;
  /** The host's shutdown: it cancels the run, attempts and waits between them alike. */
  shutdown: AttemptCancellation;
  /** `cancel(id)` of this execution: it cancels like the shutdown does. */
  cancellation: AttemptCancellation;
  /**
   * What cancels in place of `options.signal` (a dispatched run's signal, whose reason decides
   * the error: see `DispatchCancellation`); undefined: the caller's signal, if any.
   */
  signalCancellation?: AttemptCancellation | undefined;
  /** Runs one attempt (1 for the first); `abort` is what the handler sees as `ctx.signal`. */
  invoke(attempt: number, abort: LazyAbortSignal): Promise<unknown>;
  /** Told before the wait ahead of another attempt, with the error of the one that failed. */
  onRetry?(retry: { attempt: number; delay: number; error: unknown }): void;
  /** Told once an attempt settled (a timeout or cancellation settles it at once): with its error when it failed. */
  attemptEnded?(error?: unknown): void;
}

/** How a run of attempts ended; `attempts` counts those started, the failed last one included. */
export type RetriedOutcome =
  | { succeeded: true; output: unknown; attempts: number }
  | { succeeded: false; error: unknown; attempts: number };

/**
 * Runs the attempts of one execution: each bounded by its timeout (see {@link ExecutionTimeouts})
 * and the overall deadline, cancelled by the caller's signal or the host's shutdown, retried
 * with backoff per the skill's retry policy (merged with the call's). Never rejects: resolves
 * with the output of the attempt that succeeded, or the error of the last one, and the count.
 */
export function runWithRetries(run: RetriedRun): Promise<RetriedOutcome> {
  return new RetryLoop(run).run();
}

/** The attempts of one execution; also the limits of its current attempt (see `AttemptLimits`). */
class RetryLoop implements AttemptLimits {
  readonly cancellations: readonly AttemptCancellation[];
  timeoutMs = 0;
  private attempt = 0;
  /** Whether the current attempt's timeout is what is left of the overall deadline. */
  private capped = false;
  private readonly attemptTimeout: AttemptTimeout;
  private readonly totalTimeoutMs: number | undefined;
  private readonly deadline: number;
  /** Runs the current attempt: made once, not once per attempt. */
  private readonly invokeCurrent = (abort: LazyAbortSignal) => this.retried.invoke(this.attempt, abort);

  constructor(private readonly retried: RetriedRun) {
    const { skill, options } = retried;
    this.attemptTimeout = retried.timeouts.attemptTimeout(skill, options);
    this.totalTimeoutMs = retried.timeouts.totalTimeout(options);
    this.deadline =
      this.totalTimeoutMs === undefined ? Number.POSITIVE_INFINITY : retried.startedAt + this.totalTimeoutMs;
    const signalled =
      retried.signalCancellation ??
      (options.signal === undefined ? undefined : new CallerCancellation(options.signal));
    this.cancellations =
      signalled === undefined
        ? [retried.cancellation, retried.shutdown]
        : [signalled, retried.cancellation, retried.shutdown];
  }

  get label(): string {
    return `${this.retried.skill.name}@${this.retried.skill.version}`;
  }

  timeoutError(): SkillboxError {
    return this.capped
      ? new SkillboxError(
          "TIMEOUT",
          `${this.label} ran past its overall deadline of ${this.totalTimeoutMs} ms`,
          {
            retryable: false,
          },
        )
      : new SkillboxError(
          "TIMEOUT",
          `${this.label} attempt ${this.attempt} timed out after ${this.attemptTimeout.milliseconds} ms (${this.attemptTimeout.source})`,
        );
  }

  async run(): Promise<RetriedOutcome> {
    const { skill, options } = this.retried;
    for (let attempt = 1; ; attempt++) {
      this.attempt = attempt;
      // Without an overall deadline there is nothing to cap, and no clock to read.
      const remaining =
        this.deadline === Number.POSITIVE_INFINITY ? this.deadline : this.deadline - performance.now();
      this.capped = remaining < this.attemptTimeout.milliseconds;
      this.timeoutMs = this.capped ? remaining : this.attemptTimeout.milliseconds;
      try {
        const output = await runAttempt(this, this.invokeCurrent);
        this.retried.attemptEnded?.();
        return { succeeded: true, output, attempts: attempt };
      } catch (error) {
        this.retried.attemptEnded?.(error);
        // Resolved only once an attempt failed: most executions succeed at the first.
        const policy = resolveRetryPolicy(skill, options);
        if (attempt >= policy.maxAttempts || !isRetryable(error, policy)) {
          return { succeeded: false, error, attempts: attempt };
        }
        const delay = retryDelay(policy, attempt);
        if (performance.now() + delay >= this.deadline) return { succeeded: false, error, attempts: attempt };
        this.retried.onRetry?.({ attempt, delay, error });
        const cancelled = await new RetryPause(this.cancellations).wait(delay);
        if (cancelled !== undefined) {
          return { succeeded: false, error: cancelled.error(this.label), attempts: attempt };
        }
      }
    }
  }
}

/** The wait before another attempt, which the same cancellations end early. */
class RetryPause implements CancellationWatcher {
  private readonly tokens: number[] = [];
  private timer: NodeJS.Timeout | undefined;
  private done: (cancelledBy: AttemptCancellation | undefined) => void = () => {};

  constructor(private readonly cancellations: readonly AttemptCancellation[]) {}

  /** Resolves after `milliseconds`, or with the cancellation that fired first. */
  wait(milliseconds: number): Promise<AttemptCancellation | undefined> {
    const ended = new Promise<AttemptCancellation | undefined>((resolve) => {
      this.done = resolve;
    });
    for (const cancellation of this.cancellations) {
      const token = cancellation.watch(this);
      if (token < 0) {
        this.cancelledBy(cancellation);
        return ended;
      }
      this.tokens.push(token);
    }
    this.timer = setTimeout(() => this.end(undefined), milliseconds);
    return ended;
  }

  cancelledBy(cancellation: AttemptCancellation): void {
    this.end(cancellation);
  }

  private end(cancelledBy: AttemptCancellation | undefined): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    for (let index = 0; index < this.tokens.length; index++)
      this.cancellations[index]!.unwatch(this.tokens[index]!);
    this.tokens.length = 0;
    this.done(cancelledBy);
  }
}
