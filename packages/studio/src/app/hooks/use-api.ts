import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { ApiError } from "../api/api-error.js";
import { isApiError } from "../api/api-error.js";

/** The state of one API read: its last answer, its last error, and whether one is under way. */
export interface ApiState<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  /** Reads again (keeping the shown data until the answer comes: no flicker on live updates). */
  reload(): void;
}

/**
 * Reads `load` now and again whenever `dependencies` change, aborting the read it replaces.
 * Errors that are not the API's are rethrown: they are bugs, not answers.
 */
export function useApi<T>(
  load: (signal: AbortSignal) => Promise<T>,
  dependencies: readonly unknown[],
): ApiState<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  // The caller names what the read depends on (`load` is read through a ref).
  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    loadRef.current(controller.signal).then(
      (answer) => {
        if (controller.signal.aborted) return;
        setData(answer);
        setError(undefined);
        setLoading(false);
      },
      (failure: unknown) => {
        if (controller.signal.aborted) return;
        if (!isApiError(failure)) throw failure;
        setError(failure);
        setLoading(false);
      },
    );
    return () => controller.abort();
  }, [...dependencies, generation]);

  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  return { data, error, loading, reload };
}
