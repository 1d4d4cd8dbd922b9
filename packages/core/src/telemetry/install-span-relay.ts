import { type Context, context, propagation, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { AsyncContextManager } from "./async-context-manager.js";
import { RelayTracerProvider, SPAN_RELAY_KEY } from "./relay-tracer-provider.js";
import { SpanRelay } from "./span-relay.js";
import { parseTraceparent, TraceContextPropagator } from "./trace-context-propagator.js";

let installed = false;

/**
 * Registers the relay tracer provider, an `AsyncLocalStorage` context manager and the W3C
 * propagator as this thread's (or process's) OpenTelemetry globals, once: what a worker thread
 * or a sandbox runner does on its first traced task, so a handler's `trace.getTracer(...)` spans
 * and `propagation.inject(...)` work there and go back to the host. Something registered before
 * (an SDK of the handler's own) is left in place.
 */
export function installSpanRelay(): void {
  if (installed) return;
  installed = true;
  context.setGlobalContextManager(new AsyncContextManager());
  trace.setGlobalTracerProvider(new RelayTracerProvider());
  propagation.setGlobalPropagator(new TraceContextPropagator());
}

/** A task's trace context on the far side of a boundary, and where its spans are collected. */
export interface RelayedTask {
  /** Run the handler in it: the host's span is its parent, and the relay collects what ends. */
  context: Context;
  relay: SpanRelay;
  /** Calls `fn` with {@link context} active. */
  run<T>(fn: () => T): T;
}

/**
 * The context to run one task in, under the host's span named by `traceparent` (and
 * `tracestate`), with a fresh {@link SpanRelay}; undefined when `traceparent` is malformed.
 * Installs the relay first ({@link installSpanRelay}).
 */
export function startRelayedTask(traceparent: string, tracestate?: string): RelayedTask | undefined {
  const parent = parseTraceparent(traceparent, tracestate);
  if (parent === undefined) return undefined;
  installSpanRelay();
  const relay = new SpanRelay();
  const taskContext = trace.setSpanContext(ROOT_CONTEXT, parent).setValue(SPAN_RELAY_KEY, relay);
  return { context: taskContext, relay, run: (fn) => context.with(taskContext, fn) };
}
