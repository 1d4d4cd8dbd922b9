import { performance } from "node:perf_hooks";
import { isRecoverableCode } from "../errors/error-catalogue.js";
import { isSkillboxError, SkillboxError } from "../errors/skillbox-error.js";
import { isPromiseLike } from "../is-promise-like.js";
import type { InterceptorPhases } from "../telemetry/execution-span.js";
import type { HookSpan, InterceptorPhaseSpan } from "../telemetry/interceptor-phase-span.js";
import type { SkillExecution } from "../types.js";
import type {
  BeforeHookResult,
  Interceptor,
  InterceptorContext,
  InterceptorResult,
} from "./define-interceptor.js";

type HookName = "before" | "after" | "onError" | "audit";

/** What {@link InterceptorPass.before} reports: whether a layer answered instead of the handler, and with what. */
export interface PassBefore {
  shortCircuited: boolean;
  output?: unknown;
}

/** How far the execution got when `after` hooks run: what their `InterceptorResult` reports. */
export interface PassProgress {
  /** Attempts made. */
  readonly attempts: number;
  /** `performance.now()` when the execution started. */
  readonly startedAt: number;
}

/** What {@link InterceptorPass.onError} reports: an output a hook recovered with, or the error to record. */
export type PassRecovery = { recovered: true; output: unknown } | { recovered: false; error: SkillboxError };

/** Told when an `onFinish` hook throws or rejects: the execution is over, so it is only logged. */
export type FinishFailureReport = (
  interceptor: Interceptor,
  error: unknown,
  execution: SkillExecution,
) => void;

/**
 * One execution's way through its interceptors — the onion. The pass remembers how far the way
 * in got, so the way out unwinds through exactly those layers:
 *
 * - `before()` enters the layers in ascending `order`. A layer is *entered* once its `before`
 *   ran — or had nothing to run, or threw, or answered with `{ output }` (then the layers inside
 *   it, and the handler, are skipped). Layers without `before` are entered as they are passed.
 * - `after()` runs the `after` hooks of the entered layers, innermost first, threading the output.
 * - `onError()` runs the `onError` hooks of the entered layers, innermost first, whatever failed:
 *   a `before`, the handler, an output check, or an `after`. So when the `after` of layer k
 *   throws, `onError` runs for every entered layer: the ones inside k (whose `after` already ran),
 *   k itself, and the ones outside k (whose `after` never ran). Layers that `before` never
 *   reached (because an outer one threw or answered) run neither `after` nor `onError`.
 * - `audit()` and `finish()` apply to every layer that matches the skill, entered or not: what is
 *   stored must be redacted, and every observer hears how the execution ended.
 *
 * Hooks that return a plain value are not awaited: every `await` is a turn every execution pays.
 */
export interface InterceptorPass {
  /** Runs `before` hooks; rejects (or throws) with the failure of the hook that threw. */
  before(): PassBefore | Promise<PassBefore>;
  /** Runs `after` hooks of the entered layers on `output`; returns the output they leave. */
  after(output: unknown, progress: PassProgress): unknown | Promise<unknown>;
  /** Runs `onError` hooks of the entered layers; an `onError` that throws replaces the error. */
  onError(error: SkillboxError): PassRecovery | Promise<PassRecovery>;
  /** Applies `audit` hooks (outermost last) to a value about to be stored. */
  audit(field: "input" | "output", value: unknown): unknown;
  /** Runs `onFinish` hooks without waiting for them. */
  finish(execution: SkillExecution): void;
}

const NOT_SHORT_CIRCUITED: PassBefore = Object.freeze({ shortCircuited: false });

/** The pass of an execution no interceptor applies to: every phase is a no-op, nothing is allocated. */
export const EMPTY_PASS: InterceptorPass = Object.freeze({
  before: () => NOT_SHORT_CIRCUITED,
  after: (output: unknown) => output,
  onError: (error: SkillboxError): PassRecovery => ({ recovered: false, error }),
  audit: (_field: "input" | "output", value: unknown) => value,
  finish: () => {},
});

/** Wraps an unexpected throw so the execution fails with a message naming the interceptor. */
function interceptorFailure(interceptor: Interceptor, hook: HookName, error: unknown): SkillboxError {
  if (isSkillboxError(error)) {
    // The approval request names the interceptor that asked, for the approver to see.
    if (
      error.code === "APPROVAL_REQUIRED" &&
      (error.data as { requestedBy?: unknown })?.requestedBy === "interceptor"
    ) {
      return new SkillboxError("APPROVAL_REQUIRED", error.message, {
        data: { requestedBy: `interceptor:${interceptor.name}` },
      });
    }
    return error;
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new SkillboxError(
    "INTERCEPTOR_FAILED",
    `Interceptor "${interceptor.name}" failed in ${hook}(): ${reason}`,
    {
      cause: error,
      data: { interceptor: interceptor.name, hook },
    },
  );
}

/** Options of {@link LayeredPass}. */
export interface LayeredPassOptions {
  /** The interceptors that apply to the skill, in `before` order (at least one). */
  layers: readonly Interceptor[];
  context: InterceptorContext;
  /** How long an asynchronous hook may take before it fails with `INTERCEPTOR_FAILED`. */
  hookTimeoutMs: number;
  reportFinishFailure: FinishFailureReport;
  /** Where each phase that runs a hook gets its span; absent when nothing is traced. */
  spans?: InterceptorPhases | undefined;
}

/** The pass through one or more interceptors (see {@link InterceptorPass} for the rules). */
export class LayeredPass implements InterceptorPass {
  private readonly layers: readonly Interceptor[];
  private readonly context: InterceptorContext;
  private readonly hookTimeoutMs: number;
  private readonly reportFinishFailure: FinishFailureReport;
  private readonly spans: InterceptorPhases | undefined;
  /** How many layers the way in entered; the way out unwinds through `layers[0..entered)`. */
  private entered = 0;

  constructor(options: LayeredPassOptions) {
    this.layers = options.layers;
    this.context = options.context;
    this.hookTimeoutMs = options.hookTimeoutMs;
    this.reportFinishFailure = options.reportFinishFailure;
    this.spans = options.spans;
  }

  before(): PassBefore | Promise<PassBefore> {
    const phase = this.spans?.phase("before");
    return phase === undefined ? this.enter(0, undefined) : traced(phase, () => this.enter(0, phase));
  }

  /** Enters layers from `start` on; synchronous until a hook returns a promise. */
  private enter(start: number, phase: InterceptorPhaseSpan | undefined): PassBefore | Promise<PassBefore> {
    const { layers, context } = this;
    for (let index = start; index < layers.length; index++) {
      const interceptor = layers[index]!;
      this.entered = index + 1;
      if (interceptor.before === undefined) continue;
      phase?.ran(interceptor.name);
      let returned: BeforeHookResult | Promise<BeforeHookResult>;
      try {
        returned = interceptor.before(context);
      } catch (error) {
        throw failedIn(phase, interceptor, interceptorFailure(interceptor, "before", error));
      }
      if (isPromiseLike(returned)) {
        const span = phase?.awaiting(interceptor.name);
        return this.bounded(returned, interceptor, "before").then(
          (result) => {
            span?.end();
            return this.applyBefore(result) ?? this.enter(index + 1, phase);
          },
          (error: unknown) => {
            const failure = interceptorFailure(interceptor, "before", error);
            span?.end(failure);
            throw failedIn(phase, interceptor, failure);
          },
        );
      }
      const outcome = this.applyBefore(returned);
      if (outcome !== undefined) return outcome;
    }
    return NOT_SHORT_CIRCUITED;
  }

  /** What a `before` hook's result means: an early answer, or (after rewriting the input) nothing. */
  private applyBefore(result: BeforeHookResult): PassBefore | undefined {
    if (result === undefined || result === null) return undefined;
    if ("output" in result) return { shortCircuited: true, output: result.output };
    if ("input" in result) this.context.input = result.input;
    return undefined;
  }

  after(output: unknown, progress: PassProgress): unknown | Promise<unknown> {
    if (this.entered === 0) return output;
    const result: InterceptorResult = {
      output,
      attempts: progress.attempts,
      duration: performance.now() - progress.startedAt,
    };
    const phase = this.spans?.phase("after");
    const start = this.entered - 1;
    return phase === undefined
      ? this.leave(result, start, undefined)
      : traced(phase, () => this.leave(result, start, phase));
  }

  /** Runs `after` hooks from `start` outwards; synchronous until a hook returns a promise. */
  private leave(
    result: InterceptorResult,
    start: number,
    phase: InterceptorPhaseSpan | undefined,
  ): unknown | Promise<unknown> {
    const { layers, context } = this;
    for (let index = start; index >= 0; index--) {
      const interceptor = layers[index]!;
      if (interceptor.after === undefined) continue;
      phase?.ran(interceptor.name);
      let returned: ReturnType<NonNullable<Interceptor["after"]>>;
      try {
        returned = interceptor.after(context, result);
      } catch (error) {
        throw failedIn(phase, interceptor, interceptorFailure(interceptor, "after", error));
      }
      if (isPromiseLike(returned)) {
        const span = phase?.awaiting(interceptor.name);
        return this.bounded(returned, interceptor, "after").then(
          (replaced) => {
            span?.end();
            if (replaced !== undefined && replaced !== null && "output" in replaced)
              result.output = replaced.output;
            return this.leave(result, index - 1, phase);
          },
          (error: unknown) => {
            const failure = interceptorFailure(interceptor, "after", error);
            span?.end(failure);
            throw failedIn(phase, interceptor, failure);
          },
        );
      }
      if (returned !== undefined && returned !== null && "output" in returned)
        result.output = returned.output;
    }
    return result.output;
  }

  onError(error: SkillboxError): PassRecovery | Promise<PassRecovery> {
    const phase = this.spans?.phase("onError");
    return phase === undefined
      ? this.recover(error, undefined)
      : traced(phase, () => this.recover(error, phase));
  }

  /** Runs the `onError` hooks of the entered layers, innermost first. */
  private async recover(
    error: SkillboxError,
    phase: InterceptorPhaseSpan | undefined,
  ): Promise<PassRecovery> {
    // A refusal is final: recovering from one (or from a guard that failed to load and so
    // refuses in its place) would let the execution through the guard after all.
    const recoverable = isRecoverableCode(error.code);
    const { layers, context } = this;
    let current = error;
    for (let index = this.entered - 1; index >= 0; index--) {
      const interceptor = layers[index]!;
      if (interceptor.onError === undefined) continue;
      phase?.ran(interceptor.name);
      let span: HookSpan | undefined;
      try {
        const returned = interceptor.onError(context, current);
        let recovery: Awaited<typeof returned>;
        if (isPromiseLike(returned)) {
          span = phase?.awaiting(interceptor.name);
          recovery = await this.bounded(returned, interceptor, "onError");
        } else {
          recovery = returned;
        }
        span?.end();
        if (recoverable && recovery !== undefined && recovery !== null && "output" in recovery) {
          return { recovered: true, output: recovery.output };
        }
      } catch (thrown) {
        current = interceptorFailure(interceptor, "onError", thrown);
        span?.end(current);
        phase?.failed(interceptor.name);
      }
    }
    return { recovered: false, error: current };
  }

  audit(field: "input" | "output", value: unknown): unknown {
    const { layers, context } = this;
    let current = value;
    for (let index = layers.length - 1; index >= 0; index--) {
      const interceptor = layers[index]!;
      if (interceptor.audit === undefined) continue;
      try {
        const entry = interceptor.audit(
          context,
          field === "input" ? { input: current } : { output: current },
        );
        if (entry !== undefined && entry !== null && field in entry) current = entry[field];
      } catch (error) {
        // A marker in place of the value: never the raw value a failed redaction would leave.
        current = `[audit hook of interceptor "${interceptor.name}" failed: ${(error as Error)?.message ?? error}]`;
      }
    }
    return current;
  }

  finish(execution: SkillExecution): void {
    const { layers, context } = this;
    for (let index = layers.length - 1; index >= 0; index--) {
      const interceptor = layers[index]!;
      if (interceptor.onFinish === undefined) continue;
      try {
        const returned = interceptor.onFinish(context, execution);
        if (isPromiseLike(returned)) {
          returned.then(undefined, (error: unknown) =>
            this.reportFinishFailure(interceptor, error, execution),
          );
        }
      } catch (error) {
        this.reportFinishFailure(interceptor, error, execution);
      }
    }
  }

  /** Fails a hook that has not settled within `hookTimeoutMs`, so a hung hook cannot hang an execution. */
  private bounded<T>(promise: PromiseLike<T>, interceptor: Interceptor, hook: HookName): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new SkillboxError(
              "INTERCEPTOR_FAILED",
              `Interceptor "${interceptor.name}" did not finish ${hook}() within ${this.hookTimeoutMs} ms`,
              { data: { interceptor: interceptor.name, hook } },
            ),
          ),
        this.hookTimeoutMs,
      );
      promise.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}

/** Notes on the phase's span that `interceptor` failed it; returns the failure, to throw. */
function failedIn(
  phase: InterceptorPhaseSpan | undefined,
  interceptor: Interceptor,
  failure: SkillboxError,
): SkillboxError {
  phase?.failed(interceptor.name);
  return failure;
}

/** Runs a phase under its span: ended when the phase settles, with the error it failed with. */
function traced<T>(phase: InterceptorPhaseSpan, run: () => T | Promise<T>): T | Promise<T> {
  let result: T | Promise<T>;
  try {
    result = run();
  } catch (error) {
    phase.end(error);
    throw error;
  }
  if (!isPromiseLike(result)) {
    phase.end();
    return result;
  }
  return Promise.resolve(result).then(
    (value) => {
      phase.end();
      return value;
    },
    (error: unknown) => {
      phase.end(error);
      throw error;
    },
  );
}
