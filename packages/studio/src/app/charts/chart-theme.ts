import type { ExecutionStatus } from "../api/api-types.js";

/**
 * Bottom-to-top order of the stacked statuses: the outcomes people look for first (success,
 * then the failures) sit on the baseline, where bars are easiest to compare.
 */
export const STACK_ORDER: readonly ExecutionStatus[] = [
  "success",
  "error",
  "timeout",
  "denied",
  "interrupted",
  "cancelled",
  "rejected",
  "awaiting_approval",
  "queued",
  "pending",
  "running",
];

/**
 * A colour per status, mid-tones readable on the light and the dark background alike. Colour is
 * never the only cue: the legend names each series and the numbers come as a table.
 */
export const STATUS_COLORS: Record<ExecutionStatus, string> = {
  success: "#37b24d",
  error: "#e03131",
  timeout: "#f76707",
  denied: "#a61e4d",
  interrupted: "#9c36b5",
  cancelled: "#868e96",
  rejected: "#5f3dc4",
  awaiting_approval: "#f59f00",
  queued: "#74c0fc",
  pending: "#4dabf7",
  running: "#1c7ed6",
};

/** The page's own colours for axes and grid lines (canvas cannot read CSS variables itself). */
export function chartTheme(): { text: string; grid: string; accent: string } {
  const style = getComputedStyle(document.documentElement);
  const read = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    text: read("--muted", "#5b6170"),
    grid: read("--border", "#d9dce3"),
    accent: read("--accent", "#3b5bdb"),
  };
}

/** Axis steps that are whole numbers: a count of executions has no halves. */
export const COUNT_INCREMENTS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000,
];

/** The y range of a count chart: from zero, with a little room above the tallest bar. */
export function countRange(_chart: unknown, _min: number, max: number): [number, number] {
  return [0, Math.max(Math.ceil(max * 1.1), 1)];
}

/** A time-axis tick as 24-hour clock time (the Studio shows times that way everywhere). */
export function clockTicks(_chart: unknown, splits: number[]): string[] {
  return splits.map((seconds) =>
    new Date(seconds * 1000).toLocaleTimeString(undefined, {
      hour: "2-digit",
      minute: "2-digit",
      hour12: false,
    }),
  );
}
