import { getEventListeners } from "node:events";
import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { SkillboxError } from "../../src/errors/skillbox-error.js";
import { ExecutionTimeouts } from "../../src/executor/execution-timeouts.js";
import { HostShutdown } from "../../src/executor/host-shutdown.js";
import type { LazyAbortSignal } from "../../src/executor/lazy-abort-signal.js";
import { runAttempt } from "../../src/executor/run-attempt.js";
import { RunCancellation } from "../../src/executor/run-cancellation.js";
import { type RetriedOutcome, type RetriedRun, runWithRetries } from "../../src/executor/run-with-retries.js";
import type { RetryPolicy, Skill } from "../../src/types.js";
import { skillRecord } from "./executor-test-bed.js";

/** A skill as the registry would hand it over; only what the attempt runner reads matters. */
function skill(fields: { timeoutMs?: number; retry?: Partial<RetryPolicy> } = {}): Skill {
  return skillRecord({ name: "flaky", ...fields });
}

/** No delay and no jitter between attempts, so a test waits for nothing but the code under test. */
const IMMEDIATE_RETRIES: Partial<RetryPolicy> = { initialDelayMs: 0, jitter: 0 };

/** Never settles: work that only a timeout or a cancellation can end. */
const hang = () => new Promise<never>(() => {});

interface Recorded {
  outcome: RetriedOutcome;
  /** The signal each attempt received, in order. */
  signals: LazyAbortSignal[];
  retries: { attempt: number; delay: number }[];
}

/** Runs `invoke` under the attempt runner with a real HostShutdown and ExecutionTimeouts. */
async function runAttempts(
  setup: Partial<Omit<RetriedRun, "invoke" | "onRetry">> & {
    invoke: (attempt: number, abort: LazyAbortSignal) => Promise<unknown>;
    onRetry?: RetriedRun["onRetry"];
  },
): Promise<Recorded> {
  const signals: LazyAbortSignal[] = [];
  const retries: { attempt: number; delay: number }[] = [];
  const outcome = await runWithRetries({
    skill: setup.skill ?? skill(),
    options: setup.options ?? {},
    timeouts: setup.timeouts ?? new ExecutionTimeouts({}),
    startedAt: setup.startedAt ?? performance.now(),
    shutdown: setup.shutdown ?? new HostShutdown(),
    cancellation: new RunCancellation(),
    invoke: (attempt, abort) => {
      signals.push(abort);
      return setup.invoke(attempt, abort);
    },
    onRetry: (retry) => {
      retries.push({ attempt: retry.attempt, delay: retry.delay });
      setup.onRetry?.(retry);
    },
  });
  return { outcome, signals, retries };
}

function failure(outcome: RetriedOutcome): SkillboxError {
  if (outcome.succeeded) throw new Error(`expected a failure, got output ${JSON.stringify(outcome.output)}`);
  expect(outcome.error).toBeInstanceOf(SkillboxError);
  return outcome.error as SkillboxError;
}

describe("runWithRetries", () => {
  describe("timeouts", () => {
    it("fails an attempt past its timeout with TIMEOUT naming where the limit came from, and aborts its signal", async () => {
      const { outcome, signals } = await runAttempts({ options: { timeoutMs: 20 }, invoke: hang });
      const error = failure(outcome);
      expect(error.code).toBe("TIMEOUT");
      expect(error.message).toBe("flaky@1.0.0 attempt 1 timed out after 20 ms (the call's timeoutMs)");
      expect(outcome.attempts).toBe(1);
      expect(signals[0]!.signal.aborted).toBe(true);
      expect(signals[0]!.signal.reason).toBe(error);
    });

    it("takes the skill's timeout within the host's ceiling", async () => {
      const { outcome } = await runAttempts({
        skill: skill({ timeoutMs: 60_000 }),
        timeouts: new ExecutionTimeouts({ maxAttemptTimeoutMs: 20 }),
        invoke: hang,
      });
      expect(failure(outcome).message).toBe(
        "flaky@1.0.0 attempt 1 timed out after 20 ms (the host's maxAttemptTimeoutMs)",
      );
    });

    it("retries a timed-out attempt, which is retryable, with a fresh signal", async () => {
      const { outcome, signals } = await runAttempts({
        skill: skill({ retry: { ...IMMEDIATE_RETRIES, maxAttempts: 2 } }),
        options: { timeoutMs: 20 },
        invoke: (attempt) => (attempt === 1 ? hang() : Promise.resolve("second")),
      });
      expect(outcome).toEqual({ succeeded: true, output: "second", attempts: 2 });
      expect(signals[0]!.signal.aborted).toBe(true);
      expect(signals[1]!.signal.aborted).toBe(false);
    });

    it("ignores a result that arrives after the timeout", async () => {
      let finishLate: (value: string) => void = () => {};
      const { outcome } = await runAttempts({
        options: { timeoutMs: 20 },
        invoke: () =>
          new Promise<string>((resolve) => {
            finishLate = resolve;
          }),
      });
      finishLate("too late");
      expect(failure(outcome).code).toBe("TIMEOUT");
    });
  });

  describe("overall deadline", () => {
    it("caps the attempt at what is left of the deadline, with a TIMEOUT that is not retried", async () => {
      const { outcome } = await runAttempts({
        skill: skill({ retry: { ...IMMEDIATE_RETRIES, maxAttempts: 5 } }),
        options: { totalTimeoutMs: 30 },
        invoke: hang,
      });
      const error = failure(outcome);
      expect(error.code).toBe("TIMEOUT");
      expect(error.message).toBe("flaky@1.0.0 ran past its overall deadline of 30 ms");
      expect(error.retryable).toBe(false);
      expect(outcome.attempts).toBe(1);
    });

    it("counts the deadline from the start of the execution, not of the attempt runner", async () => {
      // An execution that already spent its whole deadline before its first attempt.
      const { outcome } = await runAttempts({
        options: { totalTimeoutMs: 1_000 },
        startedAt: performance.now() - 5_000,
        invoke: hang,
      });
      expect(failure(outcome).message).toBe("flaky@1.0.0 ran past its overall deadline of 1000 ms");
    });

    it("does not retry when the backoff would end past the deadline, and keeps the attempt's own error", async () => {
      const { outcome, retries } = await runAttempts({
        // The first delay is 5 000 ms (the default maxDelayMs caps 60 000), past a 3 000 ms deadline.
        skill: skill({ retry: { maxAttempts: 3, initialDelayMs: 60_000, jitter: 0 } }),
        options: { totalTimeoutMs: 3_000 },
        invoke: () => Promise.reject(new SkillboxError("UPSTREAM_DOWN", "upstream down")),
      });
      expect(failure(outcome).code).toBe("UPSTREAM_DOWN");
      expect(outcome.attempts).toBe(1);
      expect(retries).toEqual([]);
    });
  });

  describe("cancellation", () => {
    it("fails a running attempt CANCELLED when the caller's signal aborts, naming the reason", async () => {
      const caller = new AbortController();
      const { outcome, signals } = await runAttempts({
        skill: skill({ retry: { ...IMMEDIATE_RETRIES, maxAttempts: 3 } }),
        options: { signal: caller.signal },
        invoke: () => {
          caller.abort("client went away");
          return hang();
        },
      });
      const error = failure(outcome);
      expect(error.code).toBe("CANCELLED");
      expect(error.message).toBe("flaky@1.0.0 was cancelled by the caller");
      expect(error.data).toEqual({ reason: "client went away" });
      // A cancellation is final: no retry.
      expect(outcome.attempts).toBe(1);
      expect(signals[0]!.signal.aborted).toBe(true);
    });

    it("does not start an attempt for a caller whose signal aborted already", async () => {
      const caller = new AbortController();
      caller.abort("before it began");
      let invoked = 0;
      const { outcome } = await runAttempts({
        options: { signal: caller.signal },
        invoke: async () => {
          invoked++;
        },
      });
      expect(failure(outcome).code).toBe("CANCELLED");
      expect(outcome.attempts).toBe(1);
      expect(invoked).toBe(0);
    });

    it("fails a running attempt CANCELLED when the host shuts down, naming the grace period", async () => {
      const shutdown = new HostShutdown();
      const { outcome } = await runAttempts({
        shutdown,
        invoke: () => {
          shutdown.trigger(250);
          return hang();
        },
      });
      const error = failure(outcome);
      expect(error.code).toBe("CANCELLED");
      expect(error.message).toBe(
        "flaky@1.0.0 was cancelled because the host shut down: it was still running when the 250 ms shutdown grace period ran out",
      );
      expect(error.data).toEqual({ reason: "shutdown", graceMs: 250 });
    });

    it("ends the wait between attempts when the host shuts down or the caller cancels", async () => {
      const shutdown = new HostShutdown();
      const retry = { maxAttempts: 3, initialDelayMs: 60_000, jitter: 0 };
      const stoppedByShutdown = await runAttempts({
        skill: skill({ retry }),
        shutdown,
        invoke: () => Promise.reject(new Error("flaky")),
        onRetry: () => shutdown.trigger(0),
      });
      expect(failure(stoppedByShutdown.outcome).data).toEqual({ reason: "shutdown", graceMs: 0 });
      expect(stoppedByShutdown.outcome.attempts).toBe(1);

      const caller = new AbortController();
      const stoppedByCaller = await runAttempts({
        skill: skill({ retry }),
        options: { signal: caller.signal },
        invoke: () => Promise.reject(new Error("flaky")),
        onRetry: () => caller.abort("enough"),
      });
      const error = failure(stoppedByCaller.outcome);
      expect(error.message).toBe("flaky@1.0.0 was cancelled by the caller");
      expect(stoppedByCaller.outcome.attempts).toBe(1);
    });

    it("leaves no listener on the caller's signal once the run is over", async () => {
      const application = new AbortController();
      await runAttempts({
        skill: skill({ retry: { ...IMMEDIATE_RETRIES, maxAttempts: 3 } }),
        options: { signal: application.signal },
        invoke: (attempt) => (attempt < 3 ? Promise.reject(new Error("flaky")) : Promise.resolve("ok")),
      });
      await runAttempts({ options: { signal: application.signal, timeoutMs: 10 }, invoke: hang });
      expect(getEventListeners(application.signal, "abort")).toHaveLength(0);
    });
  });

  describe("retries", () => {
    it("retries a failing attempt with exponential backoff until one succeeds", async () => {
      const { outcome, retries } = await runAttempts({
        skill: skill({ retry: { maxAttempts: 4, initialDelayMs: 1, backoffCoefficient: 3, jitter: 0 } }),
        invoke: (attempt) =>
          attempt < 3 ? Promise.reject(new Error(`failure ${attempt}`)) : Promise.resolve(attempt),
      });
      expect(outcome).toEqual({ succeeded: true, output: 3, attempts: 3 });
      expect(retries).toEqual([
        { attempt: 1, delay: 1 },
        { attempt: 2, delay: 3 },
      ]);
    });

    it("stops at maxAttempts with the last attempt's error", async () => {
      const { outcome } = await runAttempts({
        skill: skill({ retry: { ...IMMEDIATE_RETRIES, maxAttempts: 3 } }),
        invoke: (attempt) => Promise.reject(new SkillboxError("UPSTREAM_DOWN", `attempt ${attempt}`)),
      });
      expect(failure(outcome).message).toBe("attempt 3");
      expect(outcome.attempts).toBe(3);
    });

    it("lets the call's maxRetries and retry override the skill's policy", async () => {
      const invoke = () => Promise.reject(new Error("flaky"));
      const fromMaxRetries = await runAttempts({
        skill: skill({ retry: { ...IMMEDIATE_RETRIES, maxAttempts: 5 } }),
        options: { maxRetries: 1 },
        invoke,
      });
      expect(fromMaxRetries.outcome.attempts).toBe(2);
      const fromRetry = await runAttempts({
        skill: skill({ retry: IMMEDIATE_RETRIES }),
        options: { retry: { maxAttempts: 4 } },
        invoke,
      });
      expect(fromRetry.outcome.attempts).toBe(4);
    });

    it("does not retry a code the policy lists as non-retryable", async () => {
      const { outcome, retries } = await runAttempts({
        skill: skill({
          retry: { ...IMMEDIATE_RETRIES, maxAttempts: 3, nonRetryableCodes: ["QUOTA_EXCEEDED"] },
        }),
        invoke: () => Promise.reject(new SkillboxError("QUOTA_EXCEEDED", "no quota left")),
      });
      expect(failure(outcome).code).toBe("QUOTA_EXCEEDED");
      expect(outcome.attempts).toBe(1);
      expect(retries).toEqual([]);
    });

    it("does not retry an error marked not retryable, nor a code never retried by default", async () => {
      const policy = skill({ retry: { ...IMMEDIATE_RETRIES, maxAttempts: 3 } });
      const marked = await runAttempts({
        skill: policy,
        invoke: () =>
          Promise.reject(new SkillboxError("UPSTREAM_DOWN", "gone for good", { retryable: false })),
      });
      expect(marked.outcome.attempts).toBe(1);
      const invalid = await runAttempts({
        skill: policy,
        invoke: () => Promise.reject(new SkillboxError("INPUT_INVALID", "bad input")),
      });
      expect(failure(invalid.outcome).code).toBe("INPUT_INVALID");
      expect(invalid.outcome.attempts).toBe(1);
    });

    it("retries an error marked retryable even though its code is not retried by default", async () => {
      const { outcome } = await runAttempts({
        skill: skill({ retry: { ...IMMEDIATE_RETRIES, maxAttempts: 2 } }),
        invoke: (attempt) =>
          attempt === 1
            ? Promise.reject(new SkillboxError("INPUT_INVALID", "not yet", { retryable: true }))
            : Promise.resolve("done"),
      });
      expect(outcome).toEqual({ succeeded: true, output: "done", attempts: 2 });
    });

    it("passes each attempt its number, and turns a synchronous throw into that attempt's failure", async () => {
      const seen: number[] = [];
      const { outcome } = await runAttempts({
        skill: skill({ retry: { ...IMMEDIATE_RETRIES, maxAttempts: 2 } }),
        invoke: (attempt) => {
          seen.push(attempt);
          throw new Error(`sync ${attempt}`);
        },
      });
      expect(seen).toEqual([1, 2]);
      expect(outcome.succeeded).toBe(false);
      expect((outcome as { error: Error }).error.message).toBe("sync 2");
    });
  });
});

describe("runAttempt", () => {
  it("settles with the work's value and leaves its signal untouched", async () => {
    let received: LazyAbortSignal | undefined;
    const value = await runAttempt(
      {
        timeoutMs: 60_000,
        timeoutError: () => new SkillboxError("TIMEOUT", "late"),
        label: "x@1",
        cancellations: [],
      },
      (abort) => {
        received = abort;
        return 42;
      },
    );
    expect(value).toBe(42);
    expect(received!.signal.aborted).toBe(false);
  });

  it("fails with the error of the first cancellation to fire", async () => {
    const first = new HostShutdown();
    const second = new HostShutdown();
    const attempt = runAttempt(
      {
        timeoutMs: 60_000,
        timeoutError: () => new SkillboxError("TIMEOUT", "late"),
        label: "x@1",
        cancellations: [first, second],
      },
      hang,
    );
    second.trigger(7);
    first.trigger(9);
    const error = (await attempt.catch((thrown: unknown) => thrown)) as SkillboxError;
    expect(error.data).toEqual({ reason: "shutdown", graceMs: 7 });
  });
});
