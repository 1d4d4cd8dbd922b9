import type { Tracer, TracerProvider } from "@opentelemetry/api";
import { installedTracerProvider } from "@skillbox/core/internal";
import { SERVER_PACKAGE_VERSION } from "../mcp/server-package-version.js";

let cachedProvider: TracerProvider | undefined;
let cachedTracer: Tracer | undefined;

/**
 * The tracer of `@skillbox/server`, or `undefined` while no OpenTelemetry SDK is installed — so a
 * front does no tracing work at all then (no propagator call, no span object, no attributes).
 * Looked up per request rather than once: an application may install its SDK after the server
 * started, and a test may install and remove one.
 *
 * @internal
 */
export function serverTracer(): Tracer | undefined {
  const provider = installedTracerProvider();
  if (provider === undefined) return undefined;
  if (provider !== cachedProvider) {
    cachedProvider = provider;
    cachedTracer = provider.getTracer("@skillbox/server", SERVER_PACKAGE_VERSION);
  }
  return cachedTracer;
}
