import {
  type Context,
  createTraceState,
  isSpanContextValid,
  type SpanContext,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
  trace,
} from "@opentelemetry/api";

const TRACEPARENT = "traceparent";
const TRACESTATE = "tracestate";

/** version-traceid-parentid-flags, lowercase hex; a later version may append fields after `-`. */
const TRACEPARENT_PATTERN = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The span context a W3C `traceparent` header names, or undefined for a malformed one: version
 * `ff`, all-zero ids, uppercase hex, or extra fields on version `00` are refused, as the W3C
 * Trace Context spec says. `tracestate` (when given) is kept as the span context's trace state.
 */
export function parseTraceparent(traceparent: string, tracestate?: string): SpanContext | undefined {
  const match = TRACEPARENT_PATTERN.exec(traceparent.trim());
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  const spanContext: SpanContext = {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16),
    isRemote: true,
  };
  if (!isSpanContextValid(spanContext)) return undefined;
  if (tracestate !== undefined && tracestate !== "") spanContext.traceState = createTraceState(tracestate);
  return spanContext;
}

/** The version-00 `traceparent` of `spanContext`. */
export function formatTraceparent(spanContext: SpanContext): string {
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, "0");
  return `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * A W3C Trace Context `TextMapPropagator` (`traceparent` and `tracestate`) on the API alone, for
 * a worker thread or a sandbox, where core may not load `@opentelemetry/core`.
 */
export class TraceContextPropagator implements TextMapPropagator {
  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    const spanContext = trace.getSpanContext(context);
    if (spanContext === undefined || !isSpanContextValid(spanContext)) return;
    setter.set(carrier, TRACEPARENT, formatTraceparent(spanContext));
    const state = spanContext.traceState?.serialize();
    if (state !== undefined && state !== "") setter.set(carrier, TRACESTATE, state);
  }

  extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    const traceparent = firstValue(getter.get(carrier, TRACEPARENT));
    if (traceparent === undefined) return context;
    const state = getter.get(carrier, TRACESTATE);
    const spanContext = parseTraceparent(traceparent, Array.isArray(state) ? state.join(",") : state);
    return spanContext === undefined ? context : trace.setSpanContext(context, spanContext);
  }

  fields(): string[] {
    return [TRACEPARENT, TRACESTATE];
  }
}
