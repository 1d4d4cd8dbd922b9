import { type Context, type Span, type Tracer, trace } from "@opentelemetry/api";
import { markFailed } from "./mark-failed.js";

/** Which hooks a phase runs. */
export type InterceptorPhase = "before" | "after" | "onError";

/** The span of one asynchronous hook, ended once it settled (with what it threw, if it did). */
export interface HookSpan {
  end(error?: unknown): void;
}

/**
 * The span of one interceptor phase of an execution — `interceptors before`, `interceptors after`
 * or `interceptors onError` — made only once a hook of that phase runs (a phase with no hook that
 * applies costs nothing). It names the interceptors whose hooks ran (`skillbox.interceptors`), and
 * the one that failed the phase (`skillbox.interceptor.name`, with the error). A hook that returns
 * a promise — one that waits on something — gets a child span `interceptor <name> <hook>` timed
 * from its call; synchronous hooks are only named, since a span each would cost more than they do.
 */
export class InterceptorPhaseSpan {
  private span: Span | undefined;
  /** Where the phase's hook spans go: under the phase's span once it exists. */
  private phaseContext: Context;
  /** When the latest hook was called (hooks of a phase run one after another). */
  private calledAt = 0;
  private readonly names: string[] = [];
  private failedBy: string | undefined;

  constructor(
    private readonly tracer: Tracer,
    private readonly parent: Context,
    private readonly phase: InterceptorPhase,
  ) {
    this.phaseContext = parent;
  }

  /** A hook of `interceptor` is called now. */
  ran(interceptor: string): void {
    if (this.span === undefined) {
      this.span = this.tracer.startSpan(
        `interceptors ${this.phase}`,
        { attributes: { "skillbox.interceptor.hook": this.phase } },
        this.parent,
      );
      this.phaseContext = trace.setSpan(this.parent, this.span);
    }
    this.names.push(interceptor);
    this.calledAt = performance.timeOrigin + performance.now();
  }

  /** The hook of `interceptor` just {@link ran} returned a promise: its span, to end once it settles. */
  awaiting(interceptor: string): HookSpan {
    const span = this.tracer.startSpan(
      `interceptor ${interceptor} ${this.phase}`,
      {
        attributes: { "skillbox.interceptor.name": interceptor, "skillbox.interceptor.hook": this.phase },
        startTime: this.calledAt,
      },
      this.phaseContext,
    );
    return {
      end(error?: unknown) {
        if (error !== undefined) markFailed(span, error);
        span.end();
      },
    };
  }

  /** The hook of `interceptor` failed the phase. */
  failed(interceptor: string): void {
    this.failedBy ??= interceptor;
  }

  /** Ends the phase's span (if a hook ran): with the error it ended in, if it did. */
  end(error?: unknown): void {
    const { span } = this;
    if (span === undefined) return;
    this.span = undefined;
    if (span.isRecording()) {
      span.setAttribute("skillbox.interceptors", this.names);
      if (this.failedBy !== undefined) span.setAttribute("skillbox.interceptor.name", this.failedBy);
      if (error !== undefined) markFailed(span, error);
    }
    span.end();
  }
}
