import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { ApiError } from "../api/api-error.js";
import { isApiError } from "../api/api-error.js";

/** The state of one API read: its last answer, its last error, and whether one is under way. */
export interface ApiState<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  /**
   * Reads again (keeping the shown data until the answer comes: no flicker on live updates).
   * Called while a read is under way, it reads once more after that one answered.
   */
  reload(): void;
}

/** The reads of one set of dependencies: aborted together when they change. */
interface Reads {
  controller: AbortController;
  running: boolean;
  /** `reload()` was called while a read ran: read once more after it. */
  again: boolean;
}

/**
 * Reads `load` now and again whenever `dependencies` change, aborting the reads they replace.
 * A `reload()` never aborts the read under way — under a steady stream of live events each
 * reload would otherwise cancel the one before and a slow listing would never be shown — it
 * queues one more read after it instead, however many reloads came meanwhile.
 * Errors that are not the API's are rethrown: they are bugs, not answers.
 */
export function useApi<T>(
  load: (signal: AbortSignal) => Promise<T>,
  dependencies: readonly unknown[],
): ApiState<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const loadRef = useRef(load);
  loadRef.current = load;
  const current = useRef<Reads | undefined>(undefined);

  // Made once: it reads state setters and refs only, which never change.
  const read = useMemo(() => {
    const start = (reads: Reads): void => {
      const { signal } = reads.controller;
      reads.running = true;
      setLoading(true);
      const settle = () => {
        reads.running = false;
        if (!reads.again) return setLoading(false);
        reads.again = false;
        start(reads);
      };
      loadRef.current(signal).then(
        (answer) => {
          if (signal.aborted) return;
          setData(answer);
          setError(undefined);
          settle();
        },
        (failure: unknown) => {
          if (signal.aborted) return;
          settle();
          if (!isApiError(failure)) throw failure;
          setError(failure);
        },
      );
    };
    return start;
  }, []);

  // The caller names what the read depends on (`load` is read through a ref).
  useEffect(() => {
    const reads: Reads = { controller: new AbortController(), running: false, again: false };
    current.current = reads;
    read(reads);
    return () => reads.controller.abort();
  }, dependencies);

  const reload = useMemo(
    () => () => {
      const reads = current.current;
      if (reads === undefined || reads.controller.signal.aborted) return;
      if (reads.running) reads.again = true;
      else read(reads);
    },
    [read],
  );
  return { data, error, loading, reload };
}
