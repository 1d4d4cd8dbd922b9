import type { AttributeValue, HrTime, SpanKind, SpanStatus } from "@opentelemetry/api";

/** An attribute value as a relayed span carries it: a primitive or an array of them. */
export type RelayedAttributes = Record<string, AttributeValue>;

/**
 * A span that ended in a worker thread or a sandbox, as plain data (structured-clone and JSON
 * safe) for the host to replay: times are epoch `[seconds, nanoseconds]`.
 */
export interface RelayedSpan {
  name: string;
  kind: SpanKind;
  traceId: string;
  spanId: string;
  /** The span's parent: another relayed span, or the host's span the task ran under. */
  parentSpanId?: string;
  startTime: HrTime;
  endTime: HrTime;
  attributes: RelayedAttributes;
  events: { name: string; time: HrTime; attributes?: RelayedAttributes }[];
  status: SpanStatus;
  links?: { traceId: string; spanId: string; traceFlags: number; attributes?: RelayedAttributes }[];
}

/** What a task's spans come back as: the spans, and how many were left out to stay bounded. */
export interface RelayedSpans {
  spans: RelayedSpan[];
  /** Spans that ended past a limit (or after the task ended) and were not kept. */
  dropped: number;
}

/** How much one task may relay: it travels with the result, so it is bounded. */
export interface SpanRelayLimits {
  /** Spans per task (default 256). */
  maxSpans: number;
  /** Attributes per span, and per event or link (default 64). */
  maxAttributes: number;
  /** Events per span (default 32). */
  maxEvents: number;
  /** Links per span (default 16). */
  maxLinks: number;
  /** Characters of a string attribute value, and elements of an array one (default 1 024). */
  maxValueLength: number;
  /** Estimated bytes of all of a task's spans (default 256 KiB). */
  maxBytes: number;
}

export const DEFAULT_SPAN_RELAY_LIMITS: SpanRelayLimits = {
  maxSpans: 256,
  maxAttributes: 64,
  maxEvents: 32,
  maxLinks: 16,
  maxValueLength: 1_024,
  maxBytes: 256 * 1_024,
};

/**
 * Collects the spans one task ends (in a worker thread or a sandbox) until the task's result is
 * sent: {@link take} hands them over once, and a span that ends later only counts as dropped.
 */
export class SpanRelay {
  private spans: RelayedSpan[] = [];
  private bytes = 0;
  private dropped = 0;
  private closed = false;

  constructor(readonly limits: SpanRelayLimits = DEFAULT_SPAN_RELAY_LIMITS) {}

  /** Keeps an ended span (of `bytes`, estimated), unless a limit is reached or the task ended. */
  record(span: RelayedSpan, bytes: number): void {
    if (
      this.closed ||
      this.spans.length >= this.limits.maxSpans ||
      this.bytes + bytes > this.limits.maxBytes
    ) {
      this.dropped++;
      return;
    }
    this.bytes += bytes;
    this.spans.push(span);
  }

  /** The spans ended so far; the relay keeps nothing after this. */
  take(): RelayedSpans {
    this.closed = true;
    const taken = { spans: this.spans, dropped: this.dropped };
    this.spans = [];
    return taken;
  }
}
