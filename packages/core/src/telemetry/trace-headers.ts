import { context, propagation } from "@opentelemetry/api";

/**
 * The trace-context headers of the active span, as the installed propagator writes them
 * (`traceparent` and `tracestate` with the W3C one); `{}` when nothing is traced.
 */
export function traceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}
