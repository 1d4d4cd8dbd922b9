import { useCallback, useEffect, useRef } from "preact/hooks";

/**
 * A function that runs `action` at once when it last ran more than `intervalMs` ago, else once
 * when that interval is over, however often it is called meanwhile: a burst of finished
 * executions becomes one re-read of the chart's numbers, and a lone one shows without delay.
 */
export function useThrottled(action: () => void, intervalMs: number): () => void {
  const actionRef = useRef(action);
  actionRef.current = action;
  const lastRun = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    if (timer.current !== undefined) return;
    const run = () => {
      timer.current = undefined;
      lastRun.current = Date.now();
      actionRef.current();
    };
    const wait = lastRun.current + intervalMs - Date.now();
    if (wait <= 0) run();
    else timer.current = setTimeout(run, wait);
  }, [intervalMs]);
}
