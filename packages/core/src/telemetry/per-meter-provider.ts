import { type MeterProvider, metrics } from "@opentelemetry/api";

/**
 * What `make` builds from the global meter provider (instruments, a registered gauge), built
 * again whenever that provider changes. The metrics API has no proxy provider, unlike tracing:
 * instruments made before an application installs its SDK would stay no-ops for ever, so they
 * are made per provider. Once built, a call costs one provider lookup. `retire` is told of what
 * was built for the provider being replaced (a gauge removes its callback there).
 */
export function perMeterProvider<T>(
  make: (provider: MeterProvider) => T,
  retire?: (previous: T) => void,
): () => T {
  let provider: MeterProvider | undefined;
  let built: T | undefined;
  return () => {
    const current = metrics.getMeterProvider();
    if (current !== provider || built === undefined) {
      if (built !== undefined) retire?.(built);
      provider = current;
      built = make(current);
    }
    return built;
  };
}
