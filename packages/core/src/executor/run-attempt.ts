import type { SkillboxError } from "../errors/skillbox-error.js";
import { LazyAbortSignal } from "./lazy-abort-signal.js";

/** Largest delay `setTimeout` accepts; longer timeouts are clamped to it. */
const MAX_TIMER_MS = 2_147_483_647;

/** A signal that cancels the attempt, and the error the attempt then fails with. */
export interface AttemptCancellation {
  signal: AbortSignal | undefined;
  error: () => SkillboxError;
}

/** How one attempt is bounded. */
export interface AttemptLimits {
  /** Milliseconds this attempt may run. */
  timeoutMs: number;
  /** The error the attempt fails with when `timeoutMs` passes. */
  timeoutError: () => SkillboxError;
  /** What cancels the attempt: the caller's signal, the host's shutdown. The first to abort wins. */
  cancellations: readonly AttemptCancellation[];
}

/**
 * Runs `work` with a fresh (lazily created) AbortSignal and settles at the first of: the work settling, the
 * timeout, or a cancellation. On timeout or cancellation the signal is aborted
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
    const listeners: { signal: AbortSignal; listener: () => void }[] = [];
    const settle = (action: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      for (const { signal, listener } of listeners) signal.removeEventListener("abort", listener);
      action();
    };
    const abortWith = (error: SkillboxError) => {
      settle(() => reject(error));
      controller.abort(error);
    };
    const timer = setTimeout(
      () => abortWith(limits.timeoutError()),
      Math.min(Math.max(limits.timeoutMs, 0), MAX_TIMER_MS),
    );
    for (const cancellation of limits.cancellations) {
      const { signal } = cancellation;
      if (signal === undefined) continue;
      const listener = () => abortWith(cancellation.error());
      if (signal.aborted) {
        listener();
        return;
      }
      signal.addEventListener("abort", listener, { once: true });
      listeners.push({ signal, listener });
    }
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
