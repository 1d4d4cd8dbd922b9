/** A signal that follows several, and the way to stop following them. */
export interface LinkedSignal {
  /** Aborts (with the same reason) as soon as one of the linked signals does. */
  signal: AbortSignal;
  /** Removes the listeners from the linked signals; call it once the signal is no longer needed. */
  unlink(): void;
}

const NOTHING_TO_UNLINK = () => {};

/**
 * Like `AbortSignal.any(signals)` (undefined entries skipped; one signal is returned as it is),
 * but it leaves nothing behind on a source once `unlink()` ran. The executor links per execution
 * to long-lived signals — the host's shutdown signal, an application's own passed to every call —
 * and Node 20 keeps an entry on each source of `AbortSignal.any()` for the source's whole life.
 */
export function linkSignals(signals: readonly (AbortSignal | undefined)[]): LinkedSignal {
  const sources = signals.filter((signal) => signal !== undefined);
  if (sources.length === 1) return { signal: sources[0]!, unlink: NOTHING_TO_UNLINK };
  const controller = new AbortController();
  const aborted = sources.find((source) => source.aborted);
  if (aborted !== undefined || sources.length === 0) {
    if (aborted !== undefined) controller.abort(aborted.reason);
    return { signal: controller.signal, unlink: NOTHING_TO_UNLINK };
  }
  const follow = (event: Event) => {
    unlink();
    controller.abort((event.target as AbortSignal).reason);
  };
  const unlink = () => {
    for (const source of sources) source.removeEventListener("abort", follow);
  };
  for (const source of sources) source.addEventListener("abort", follow, { once: true });
  return { signal: controller.signal, unlink };
}
