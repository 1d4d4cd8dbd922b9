import { createRequire } from "node:module";
import type { Attributes, ObservableGauge, ObservableResult } from "@opentelemetry/api";
import { perMeterProvider } from "@skillbox/core/internal";

/** What the gauge reads of one warm pool. */
export interface ObservedWarmPool {
  /** Sandboxes started and waiting for their job. */
  readonly readyCount: number;
  /** The attributes of its point (the skill it warms; none when the pool does not know it). */
  readonly attributes: Attributes;
}

const GAUGE_NAME = "skillbox.sandbox.warm_pool.sandboxes";

/** The open pools of the process. */
const pools = new Set<ObservedWarmPool>();
/** The attribute sets the gauge reported, by key: one whose pools all closed reads 0 from then on. */
const reported = new Map<string, Attributes>();

function observe(result: ObservableResult): void {
  // Two runtimes of one process (two hosts) may warm the same skill: one point, their sum.
  const totals = new Map<string, number>();
  for (const pool of pools) {
    const key = JSON.stringify(pool.attributes);
    reported.set(key, pool.attributes);
    totals.set(key, (totals.get(key) ?? 0) + pool.readyCount);
  }
  // A cumulative reader (the default, and OTLP's) repeats a point's last value for as long as the
  // instrument lives: a skill whose pool closed has to say 0, not its last count.
  for (const [key, attributes] of reported) result.observe(totals.get(key) ?? 0, attributes);
}

/**
 * The process's one `skillbox.sandbox.warm_pool.sandboxes` gauge (meter `@skillbox/sandbox`):
 * the ready sandboxes of every open warm pool, a point per skill (`gen_ai.tool.name`,
 * `skillbox.skill.version`). Pools are tracked from construction to close, so a closed pool is
 * neither counted nor kept alive. The gauge is registered once per meter provider, when the
 * first pool opens.
 */
export const warmPoolGauge = {
  /** Reports `pool` from now on. */
  track(pool: ObservedWarmPool): void {
    pools.add(pool);
    warmPoolGauge.refresh();
  },

  /** Stops counting `pool` (its skill reads 0 once no open pool warms it). */
  untrack(pool: ObservedWarmPool): void {
    pools.delete(pool);
  },

  /**
   * Registers the gauge with the global meter provider as it is now, when that is another one than
   * before (see `perMeterProvider`): a gauge registered before the application installed its SDK
   * would never be read. Cheap when nothing changed (one lookup).
   */
  refresh(): void {
    if (pools.size > 0) registered();
  },
};

/** The gauge, registered with the meter provider of the moment. */
const registered = perMeterProvider(
  (provider) => {
    // A new provider starts with no points.
    reported.clear();
    // src/ and dist/ are both one level below the package root.
    const { version } = createRequire(import.meta.url)("../package.json") as { version: string };
    const instrument = provider.getMeter("@skillbox/sandbox", version).createObservableGauge(GAUGE_NAME, {
      description: "Sandboxes of the warm pools started and waiting for their job, per skill",
      unit: "{sandbox}",
    });
    instrument.addCallback(observe);
    return instrument;
  },
  (previous: ObservableGauge) => previous.removeCallback(observe),
);
