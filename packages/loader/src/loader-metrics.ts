import { createRequire } from "node:module";
import type { Counter } from "@opentelemetry/api";
import { perMeterProvider } from "@skillbox/core/internal";

/** What a hot reload did to one package: the loader event it announced, or `failed`. */
export type ReloadOutcome = "loaded" | "reloaded" | "removed" | "failed";

/** Which kind of package an outcome is about. */
export type PackageKind = "skill" | "interceptor";

interface LoaderInstruments {
  reloads: Counter;
  loadErrors: Counter;
}

/** The loader's instruments on the global meter provider as it is now (see `perMeterProvider`). */
const current = perMeterProvider((provider): LoaderInstruments => {
  // src/ and dist/ are both one level below the package root.
  const { version } = createRequire(import.meta.url)("../package.json") as { version: string };
  const meter = provider.getMeter("@skillbox/loader", version);
  return {
    reloads: meter.createCounter("skillbox.reloads", {
      description:
        "Packages a hot reload changed, by outcome (loaded, reloaded, removed, failed) and package kind",
      unit: "{package}",
    }),
    loadErrors: meter.createCounter("skillbox.load_errors", {
      description:
        "Packages that failed to load (at start-up, on a hot reload, or on a handler's first import)",
      unit: "{package}",
    }),
  };
});

/**
 * The loader's OpenTelemetry metrics (meter `@skillbox/loader`): `skillbox.reloads` counts what
 * each watched sync did to each package (attributes `skillbox.reload.outcome`,
 * `skillbox.package.kind`); `skillbox.load_errors` counts every package failure the loader
 * reports as an `error` event (attributes `skillbox.package.kind`, `skillbox.error.code`).
 */
export const loaderMetrics = {
  /** One package's outcome of a hot reload. */
  reload(outcome: ReloadOutcome, kind: PackageKind): void {
    current().reloads.add(1, { "skillbox.reload.outcome": outcome, "skillbox.package.kind": kind });
  },
  /** One package that failed to load, with the failure's code (`MANIFEST_INVALID`, …). */
  loadError(kind: PackageKind, code: string): void {
    current().loadErrors.add(1, { "skillbox.package.kind": kind, "skillbox.error.code": code });
  },
};
