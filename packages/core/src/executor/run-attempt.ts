import type { SkillboxError } from "../errors/skillbox-error.js";
import { LazyAbortSignal } from "./lazy-abort-signal.js";

/** Largest delay `setTimeout` accepts; longer timeouts are clamped to it. */
const MAX_TIMER_MS = 2_147_483_647;

/** How one attempt is bounded. */
export interface AttemptLimits {
  /** Milliseconds this attempt may run. */
  timeoutMs: number;
  /** The error the attempt fails with when `timeoutMs` passes. */
  timeoutError: () => SkillboxError;
  /** The caller's signal; aborting it fails the attempt with `CANCELLED`. */
  callerSignal: AbortSignal | undefined;
  cancelledError: () => SkillboxError;
}

/**
 * Runs `work` with a fresh (lazily created) AbortSignal and settles at the first of: the work settling, the
 * timeout, or the caller's cancellation. On timeout or cancellation the signal is aborted
 * and the promise rejects *at once*, whether or not the work honours the signal; a late
 * result or rejection of the work is then ignored.
 */
export function runAttempt<T>(
  limits: AttemptLimits,
  work: (abort: LazyAbortSignal) => Promise<T> | T,
): Promise<T> {
  const controller = new LazyAbortSignal();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const settle = (action: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      limits.callerSignal?.removeEventListener("abort", onCallerAbort);
      action();
    };
    const abortWith = (error: SkillboxError) => {
      settle(() => reject(error));
      controller.abort(error);
    };
    const onCallerAbort = () => abortWith(limits.cancelledError());
    const timer = setTimeout(
      () => abortWith(limits.timeoutError()),
      Math.min(Math.max(limits.timeoutMs, 0), MAX_TIMER_MS),
    );
    if (limits.callerSignal?.aborted) {
      onCallerAbort();
      return;
    }
    limits.callerSignal?.addEventListener("abort", onCallerAbort, { once: true });
    let pending: Promise<T>;
    try {
      pending = Promise.resolve(work(controller));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (value) => settle(() => resolve(value)),
      (error: unknown) => settle(() => reject(error)),
    );
  });
}
