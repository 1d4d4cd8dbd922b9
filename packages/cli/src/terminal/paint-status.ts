import { type ExecutionStatus, isFinalExecutionStatus } from "@skillbox/core";
import type { Colors } from "./terminal.js";

/**
 * `text` (default: the status) in the colour of an execution status, the same in every view:
 * green for success, yellow while it awaits approval, cyan while it waits or runs, red for any
 * other end.
 */
export function paintStatus(status: ExecutionStatus, colors: Colors, text: string = status): string {
  if (status === "success") return colors.green(text);
  if (status === "awaiting_approval") return colors.yellow(text);
  if (!isFinalExecutionStatus(status)) return colors.cyan(text);
  return colors.red(text);
}
