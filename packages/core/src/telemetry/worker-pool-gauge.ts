import type { ObservableGauge, ObservableResult } from "@opentelemetry/api";
import { perMeterProvider } from "./per-meter-provider.js";

/** What the gauge reads of one worker runtime. */
export interface ObservedWorkerPool {
  /** Threads alive over the runtime's pools. */
  threadCount(): number;
  /** Tasks handed to its pools and not settled (a thread runs one at a time). */
  readonly tasksOut: number;
}

const GAUGE_NAME = "skillbox.worker_pool.threads";
const BUSY = { "skillbox.worker_pool.state": "busy" };
const IDLE = { "skillbox.worker_pool.state": "idle" };

/** The open worker runtimes of the process. */
const runtimes = new Set<ObservedWorkerPool>();

function observe(result: ObservableResult): void {
  let busy = 0;
  let idle = 0;
  for (const runtime of runtimes) {
    const threads = runtime.threadCount();
    const running = Math.min(runtime.tasksOut, threads);
    busy += running;
    idle += threads - running;
  }
  // Both points always: a cumulative reader repeats a point's last value while the instrument
  // lives, so a closed runtime's threads must read 0, not linger.
  result.observe(busy, BUSY);
  result.observe(idle, IDLE);
}

/**
 * The process's one `skillbox.worker_pool.threads` gauge (meter `@skillbox/core`): the threads
 * of every open worker runtime, by `skillbox.worker_pool.state` (`busy`: running a task, `idle`).
 * Registered once per meter provider (see `perMeterProvider`): {@link refresh} registers it again
 * with an SDK installed after the runtime was made.
 */
export const workerPoolGauge = {
  /** Counts `runtime` from now on. */
  track(runtime: ObservedWorkerPool): void {
    runtimes.add(runtime);
    workerPoolGauge.refresh();
  },

  /** Stops counting `runtime` (closed). */
  untrack(runtime: ObservedWorkerPool): void {
    runtimes.delete(runtime);
  },

  /** Registers the gauge with the global meter provider when that changed; one lookup otherwise. */
  refresh(): void {
    registered();
  },
};

/** The gauge, registered with the meter provider of the moment. */
const registered = perMeterProvider(
  (provider) => {
    const instrument = provider.getMeter("@skillbox/core").createObservableGauge(GAUGE_NAME, {
      description: "Worker threads alive, by whether a task runs on them",
      unit: "{thread}",
    });
    instrument.addCallback(observe);
    return instrument;
  },
  (previous: ObservableGauge) => previous.removeCallback(observe),
);
