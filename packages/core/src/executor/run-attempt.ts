import type { SkillboxError } from "../errors/skillbox-error.js";
import { isPromiseLike } from "../is-promise-like.js";
import { LazyAbortSignal } from "./lazy-abort-signal.js";

/** Largest delay `setTimeout` accepts; longer timeouts are clamped to it. */
const MAX_TIMER_MS = 2_147_483_647;

/** What a cancellation tells when it fires: an attempt, or the wait before the next one. */
export interface CancellationWatcher {
  cancelledBy(cancellation: AttemptCancellation): void;
}

/** Something that cancels attempts — the caller's signal, the host's shutdown — and the error they then fail with. */
export interface AttemptCancellation {
  /**
   * Starts telling `watcher` when it fires; returns the token that stops it, or -1 (telling
   * nobody) when it fired already.
   */
  watch(watcher: CancellationWatcher): number;
  /** Stops telling the watcher that `watch` returned `token` for. */
  unwatch(token: number): void;
  /** The error of an attempt of `label` (`name@version`) it cancelled. */
  error(label: string): SkillboxError;
}

/**
 * How one attempt is bounded. A method and getters rather than closures: one object serves
 * every attempt of an execution (see `runWithRetries`), and nothing is built unless it is used.
 */
export interface AttemptLimits {
  /** Milliseconds this attempt may run. */
  readonly timeoutMs: number;
  /** The error the attempt fails with when `timeoutMs` passes. */
  timeoutError(): SkillboxError;
  /** `name@version` of the skill, for the cancellation messages. */
  readonly label: string;
  /** What cancels the attempt. The first to fire wins. */
  readonly cancellations: readonly AttemptCancellation[];
}

/**
 * Runs `work` with a fresh (lazily created) AbortSignal and settles at the first of: the work
 * settling, the timeout, or a cancellation. On timeout or cancellation the signal is aborted
 * and the promise rejects *at once*, whether or not the work honours the signal; a late result
 * or rejection of the work is then ignored. Work is not started when a cancellation already fired.
 */
export function runAttempt<T>(
  limits: AttemptLimits,
  work: (abort: LazyAbortSignal) => Promise<T> | T,
): Promise<T> {
  return new Attempt<T>(limits).run(work);
}

function timeOut(attempt: Pick<Attempt<never>, "abortWith" | "limits">): void {
  attempt.abortWith(attempt.limits.timeoutError());
}

/** One attempt's race between its work, its timeout and its cancellations; one object, no closures per listener. */
class Attempt<T> implements CancellationWatcher {
  private readonly abort = new LazyAbortSignal();
  private settled = false;
  private timer: NodeJS.Timeout | undefined;
  /** The tokens of the cancellations watched, in the order of `limits.cancellations`. */
  private readonly tokens: number[] = [];
  private resolve: (value: T) => void = () => {};
  private reject: (error: unknown) => void = () => {};

  constructor(readonly limits: AttemptLimits) {}

  run(work: (abort: LazyAbortSignal) => Promise<T> | T): Promise<T> {
    const promise = new Promise<T>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    for (const cancellation of this.limits.cancellations) {
      const token = cancellation.watch(this);
      if (token < 0) {
        this.cancelledBy(cancellation);
        return promise;
      }
      this.tokens.push(token);
    }
    this.timer = setTimeout(timeOut, Math.min(Math.max(this.limits.timeoutMs, 0), MAX_TIMER_MS), this);
    let pending: Promise<T> | T;
    try {
      pending = work(this.abort);
    } catch (error) {
      this.fail(error);
      return promise;
    }
    if (isPromiseLike(pending)) {
      pending.then(
        (value) => this.succeed(value),
        (error: unknown) => this.fail(error),
      );
    } else {
      this.succeed(pending);
    }
    return promise;
  }

  cancelledBy(cancellation: AttemptCancellation): void {
    this.abortWith(cancellation.error(this.limits.label));
  }

  /** Ends the attempt with `error` and aborts its signal (a late result is ignored). */
  abortWith(error: SkillboxError): void {
    if (!this.settle()) return;
    this.reject(error);
    this.abort.abort(error);
  }

  private succeed(value: T): void {
    if (this.settle()) this.resolve(value);
  }

  private fail(error: unknown): void {
    if (this.settle()) this.reject(error);
  }

  /** Stops the timer and the watching; false when the attempt had settled already. */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    const { cancellations } = this.limits;
    for (let index = 0; index < this.tokens.length; index++)
      cancellations[index]!.unwatch(this.tokens[index]!);
    return true;
  }
}
