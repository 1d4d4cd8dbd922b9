import type { ExecutionStatus } from "../api/api-types.js";

/**
 * A symbol for each status, so it never rests on colour alone — from blocks the common system
 * fonts (DejaVu on Linux) carry, so none renders as an empty box.
 */
const SYMBOLS: Record<ExecutionStatus, string> = {
  queued: "◷",
  awaiting_approval: "‖",
  pending: "◷",
  running: "▶",
  success: "✓",
  error: "✕",
  timeout: "◔",
  cancelled: "⊘",
  denied: "⊗",
  rejected: "⊘",
  interrupted: "↯",
};

/** How a status reads: `awaiting_approval` → "awaiting approval". */
export function statusLabel(status: string): string {
  return status.replaceAll("_", " ");
}

/** An execution's status: symbol, word and colour (the class `status-<status>`). */
export function StatusBadge({ status }: { status: ExecutionStatus }) {
  return (
    <span class={`status status-${status}`} data-status={status}>
      <span aria-hidden="true">{SYMBOLS[status] ?? "•"}</span> {statusLabel(status)}
    </span>
  );
}
