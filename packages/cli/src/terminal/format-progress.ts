import type { ProgressReport } from "@skillbox/core";

const BAR_WIDTH = 20;

/**
 * A progress report as one line: `[████████░░░░░░░░░░░░]  40% message` when the total is known,
 * else `3 message` (a count that only grows).
 */
export function formatProgress(report: ProgressReport): string {
  const message = report.message === undefined ? "" : ` ${report.message}`;
  if (report.total === undefined || !(report.total > 0)) return `${report.progress}${message}`;
  const fraction = Math.min(1, Math.max(0, report.progress / report.total));
  const filled = Math.round(fraction * BAR_WIDTH);
  const percent = `${Math.floor(fraction * 100)}%`.padStart(4);
  return `[${"█".repeat(filled)}${"░".repeat(BAR_WIDTH - filled)}] ${percent}${message}`;
}
