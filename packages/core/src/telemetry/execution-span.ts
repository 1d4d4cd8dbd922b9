import {
  type Attributes,
  type Context,
  type Span,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { ExecutionError, ExecutionStatus } from "../types.js";
import { type InterceptorPhase, InterceptorPhaseSpan } from "./interceptor-phase-span.js";
import { codeOf, markFailed } from "./mark-failed.js";

/** Where an interceptor pass makes the spans of its phases. */
export interface InterceptorPhases {
  /** The span of a phase about to run (started only once one of its hooks does). */
  phase(phase: InterceptorPhase): InterceptorPhaseSpan;
}

/** How an execution's span ends. */
export interface ExecutionSpanEnd {
  status: ExecutionStatus;
  error: ExecutionError | null;
  attempts: number;
  /** The input as the audit trail stores it, when the operator opted in to recording it. */
  arguments?: unknown;
  /** The output as the audit trail stores it, when the operator opted in to recording it. */
  result?: unknown;
}

/** Longest JSON text of an input or output kept as an attribute; longer is cut. */
const MAX_PAYLOAD_ATTRIBUTE = 8_192;

/**
 * The `execute_tool <skill>` span of one execution and the spans under it: one per attempt
 * (the context the runtime runs in), the waits between attempts, and the interceptor phases.
 */
export class ExecutionSpan implements InterceptorPhases {
  /** The context whose active span is the execution's: the parent of its children. */
  readonly context: Context;
  private attemptSpan: Span | undefined;
  private backoffSpan: Span | undefined;
  private ended = false;

  constructor(
    private readonly tracer: Tracer,
    readonly span: Span,
    parent: Context,
  ) {
    this.context = trace.setSpan(parent, span);
  }

  /** The trace id, when the span is recorded; else null (what the record stores). */
  get traceId(): string | null {
    return this.span.isRecording() ? this.span.spanContext().traceId : null;
  }

  /** The span id, when the span is recorded; else null. */
  get spanId(): string | null {
    return this.span.isRecording() ? this.span.spanContext().spanId : null;
  }

  /** Starts attempt `attempt`'s span; returns the context the attempt runs in. */
  startAttempt(attempt: number): Context {
    this.endBackoff();
    const span = this.tracer.startSpan(
      `attempt ${attempt}`,
      { attributes: { "skillbox.attempt": attempt } },
      this.context,
    );
    this.attemptSpan = span;
    return trace.setSpan(this.context, span);
  }

  /** Ends the current attempt's span: with the error it failed with, if it failed. */
  endAttempt(error?: unknown): void {
    const span = this.attemptSpan;
    if (span === undefined) return;
    this.attemptSpan = undefined;
    if (error !== undefined) markFailed(span, error);
    span.end();
  }

  /** Starts the span of the wait ahead of the next attempt (ended when it starts, or the execution ends). */
  startBackoff(delayMs: number, error: unknown): void {
    this.endBackoff();
    const attributes: Attributes = { "skillbox.retry.delay_ms": delayMs };
    const code = codeOf(error);
    if (code !== undefined) attributes["skillbox.retry.after_error"] = code;
    this.backoffSpan = this.tracer.startSpan("retry backoff", { attributes }, this.context);
  }

  phase(phase: InterceptorPhase): InterceptorPhaseSpan {
    return new InterceptorPhaseSpan(this.tracer, this.context, phase);
  }

  /** Ends the span with the execution's outcome (and any child left open by a cancellation). */
  end(outcome: ExecutionSpanEnd): void {
    if (this.ended) return;
    this.ended = true;
    const { span } = this;
    this.endBackoff();
    this.endAttempt();
    if (!span.isRecording()) {
      span.end();
      return;
    }
    span.setAttribute("skillbox.status", outcome.status);
    span.setAttribute("skillbox.attempts", outcome.attempts);
    if (outcome.arguments !== undefined)
      span.setAttribute("gen_ai.tool.call.arguments", payload(outcome.arguments));
    if (outcome.result !== undefined) span.setAttribute("gen_ai.tool.call.result", payload(outcome.result));
    const { error } = outcome;
    if (error !== null) {
      span.setAttribute("skillbox.error.code", error.code);
      span.setAttribute("error.type", error.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
    span.end();
  }

  /**
   * Ends the span of an execution that failed outside its phases — before it could run (its
   * input unreadable, its row unwritable) — with that error; a span that ended already stays as it is.
   */
  abandon(error: unknown, attempts: number): void {
    if (this.ended) return;
    markFailed(this.span, error);
    this.end({ status: "error", error: null, attempts });
  }

  private endBackoff(): void {
    this.backoffSpan?.end();
    this.backoffSpan = undefined;
  }
}

/** An input or output as attribute text: JSON, cut to {@link MAX_PAYLOAD_ATTRIBUTE} characters. */
function payload(value: unknown): string {
  let text: string;
  try {
    text = typeof value === "string" ? value : (JSON.stringify(value) ?? "null");
  } catch {
    text = "[not JSON]";
  }
  return text.length > MAX_PAYLOAD_ATTRIBUTE ? `${text.slice(0, MAX_PAYLOAD_ATTRIBUTE)}…` : text;
}
