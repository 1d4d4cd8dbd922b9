import type { Tracer } from "@opentelemetry/api";
import { installedTracer } from "@skillbox/core/internal";
import { SERVER_PACKAGE_VERSION } from "../mcp/server-package-version.js";

/**
 * The tracer of `@skillbox/server`, or `undefined` while no OpenTelemetry SDK is installed — so a
 * front does no tracing work at all then (no propagator call, no span object, no attributes).
 * Looked up per request rather than once: an application may install its SDK after the server
 * started, and a test may install and remove one.
 *
 * @internal
 */
export function serverTracer(): Tracer | undefined {
  return installedTracer("@skillbox/server", SERVER_PACKAGE_VERSION);
}
