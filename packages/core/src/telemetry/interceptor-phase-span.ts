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
  private readonly names: string[] = [];
  private failedBy: string | undefined;

  constructor(
    private readonly tracer: Tracer,
    private readonly parent: Context,
    private readonly phase: InterceptorPhase,
  ) {}

  /** A hook of `interceptor` is called now; returns the time it was called, for {@link awaiting}. */
  ran(interceptor: string): number {
    this.span ??= this.tracer.startSpan(
      `interceptors ${this.phase}`,
      { attributes: { "skillbox.interceptor.hook": this.phase } },
      this.parent,
    );
    this.names.push(interceptor);
    return performance.timeOrigin + performance.now();
  }

  /** The hook of `interceptor` called at `calledAt` returned a promise: its span, to end once it settles. */
  awaiting(interceptor: string, calledAt: number): HookSpan {
    const span = this.tracer.startSpan(
      `interceptor ${interceptor} ${this.phase}`,
      {
        attributes: { "skillbox.interceptor.name": interceptor, "skillbox.interceptor.hook": this.phase },
        startTime: calledAt,
      },
      this.span === undefined ? this.parent : trace.setSpan(this.parent, this.span),
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
