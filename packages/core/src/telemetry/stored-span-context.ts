import { type Context, createTraceState, ROOT_CONTEXT, type SpanContext, trace } from "@opentelemetry/api";

/** A span context as a queued execution's job keeps it, so the run continues the submitter's trace. */
export interface StoredSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState?: string;
}

/** The span context `parent` holds, to store; undefined when it holds none. */
export function storedSpanContextOf(parent: Context | undefined): StoredSpanContext | undefined {
  if (parent === undefined) return undefined;
  const spanContext = trace.getSpanContext(parent);
  if (spanContext === undefined || !trace.isSpanContextValid(spanContext)) return undefined;
  const stored: StoredSpanContext = {
    traceId: spanContext.traceId,
    spanId: spanContext.spanId,
    traceFlags: spanContext.traceFlags,
  };
  const traceState = spanContext.traceState?.serialize();
  if (traceState !== undefined && traceState !== "") stored.traceState = traceState;
  return stored;
}

/** The context a stored span context stands for (a remote parent); undefined for a missing or malformed one. */
export function contextOfStoredSpan(stored: unknown): Context | undefined {
  if (typeof stored !== "object" || stored === null) return undefined;
  const { traceId, spanId, traceFlags, traceState } = stored as Partial<StoredSpanContext>;
  if (typeof traceId !== "string" || typeof spanId !== "string" || typeof traceFlags !== "number")
    return undefined;
  const spanContext: SpanContext = { traceId, spanId, traceFlags, isRemote: true };
  if (typeof traceState === "string") spanContext.traceState = createTraceState(traceState);
  if (!trace.isSpanContextValid(spanContext)) return undefined;
  return trace.setSpanContext(ROOT_CONTEXT, spanContext);
}
