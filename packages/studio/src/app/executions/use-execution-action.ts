import { useCallback, useRef, useState } from "preact/hooks";
import { type ApiError, isApiError } from "../api/api-error.js";
import type { ExecutionRecord } from "../api/api-types.js";

/** One action on an execution (cancel, approve, reject) as a view runs it. */
export interface ExecutionAction {
  /** The action under way ("approve"…), so its button can say so and the others wait. */
  pending: string | null;
  /** The server's refusal of the last action (409 `EXECUTION_FINISHED`, 403 `FORBIDDEN`…), shown as it is. */
  error: ApiError | { code: string; message: string } | undefined;
  /** Runs `send`; its record goes to `onDone`, its refusal into `error`. */
  run(name: string, send: () => Promise<ExecutionRecord>): Promise<void>;
  /** Shows a refusal found before asking the server (input that is not JSON). */
  fail(error: { code: string; message: string }): void;
}

/**
 * Runs the durable-executions actions of a view one at a time. Errors that are not the API's are
 * rethrown: they are bugs, not answers.
 */
export function useExecutionAction(
  onDone: (execution: ExecutionRecord, action: string) => void,
  onRefused?: (error: ApiError) => void,
): ExecutionAction {
  const [pending, setPending] = useState<string | null>(null);
  const [error, setError] = useState<ExecutionAction["error"]>(undefined);
  const onDoneRef = useRef(onDone);
  onDoneRef.current = onDone;
  const onRefusedRef = useRef(onRefused);
  onRefusedRef.current = onRefused;
  const busy = useRef(false);

  const run = useCallback(async (name: string, send: () => Promise<ExecutionRecord>) => {
    // A double click must not send a second decision (the server would refuse it anyway).
    if (busy.current) return;
    busy.current = true;
    setPending(name);
    setError(undefined);
    try {
      const execution = await send();
      onDoneRef.current(execution, name);
    } catch (failure) {
      if (!isApiError(failure)) throw failure;
      setError(failure);
      onRefusedRef.current?.(failure);
    } finally {
      busy.current = false;
      setPending(null);
    }
  }, []);

  const fail = useCallback((failure: { code: string; message: string }) => setError(failure), []);
  return { pending, error, run, fail };
}
