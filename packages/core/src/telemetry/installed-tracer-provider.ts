import { ProxyTracerProvider, type Tracer, type TracerProvider, trace } from "@opentelemetry/api";

/** The provider a proxy hands out while no SDK is installed (the API's no-op singleton). */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * The tracer provider an OpenTelemetry SDK installed, or undefined while there is none — so a
 * caller does no tracing work at all then. The global provider is a proxy (of this copy of the
 * API or another's) until an SDK hands it a delegate; looked up per call, since an application
 * may install its SDK after Skillbox started (and a test installs and removes one).
 */
function installedTracerProvider(): TracerProvider | undefined {
  const provider = trace.getTracerProvider() as TracerProvider & { getDelegate?: () => TracerProvider };
  const delegate = typeof provider.getDelegate === "function" ? provider.getDelegate() : provider;
  // Another copy of the API has a no-op provider of its own: known by its class.
  return delegate === NOOP_TRACER_PROVIDER || delegate.constructor?.name === "NoopTracerProvider"
    ? undefined
    : delegate;
}

/** The tracer of each name, with the provider it came from. */
const tracers = new Map<string, { provider: TracerProvider; tracer: Tracer }>();

/**
 * The tracer `name` (at `version`) of the installed SDK, or undefined while there is none (see
 * {@link installedTracerProvider}); made once per provider.
 */
export function installedTracer(name: string, version?: string): Tracer | undefined {
  const provider = installedTracerProvider();
  if (provider === undefined) return undefined;
  const known = tracers.get(name);
  if (known?.provider === provider) return known.tracer;
  const tracer = provider.getTracer(name, version);
  tracers.set(name, { provider, tracer });
  return tracer;
}
