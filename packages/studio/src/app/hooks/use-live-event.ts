import { useEffect, useRef } from "preact/hooks";
import type { LiveEvent } from "../api/api-types.js";
import { useStudio } from "../studio-context.js";

/** Calls `listener` for every live event while the view is shown (the latest `listener` each time). */
export function useLiveEvent(listener: (event: LiveEvent) => void): void {
  const { live } = useStudio();
  const listenerRef = useRef(listener);
  listenerRef.current = listener;
  useEffect(() => live.subscribe((event) => listenerRef.current(event)), [live]);
}

/**
 * A function that runs `action` at most once per `delayMs`, however often it is called: a burst
 * of live events becomes one new listing, not one per event.
 */
export function useCoalesced(action: () => void, delayMs = 400): () => void {
  const actionRef = useRef(action);
  actionRef.current = action;
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const schedule = useRef(() => {
    if (timer.current !== undefined) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      actionRef.current();
    }, delayMs);
  });
  return schedule.current;
}
