import type { ExecutionSummary, SkillExecution } from "@skillbox/core";
import { formatProgress } from "./format-progress.js";
import { paintStatus } from "./paint-status.js";
import type { Colors, Terminal } from "./terminal.js";

/** One execution as `skillbox executions <id>` shows it, with its parent and children. */
export interface ExecutionView {
  execution: SkillExecution;
  /** The execution that ran this one through `ctx.call`, when it is still recorded. */
  parent: ExecutionSummary | SkillExecution | undefined;
  /** The executions this one ran through `ctx.call`, oldest first. */
  children: ExecutionSummary[];
}

function durationText(duration: number | null): string {
  return duration === null ? "-" : `${duration.toFixed(1)} ms`;
}

function timeText(iso: string | null): string {
  return iso === null ? "-" : `${iso.replace("T", " ").replace("Z", "")} UTC`;
}

/** `name@version status (duration)` for a related execution. */
function relatedLine(related: ExecutionSummary | SkillExecution, colors: Colors): string {
  const error = related.error === null ? "" : ` ${related.error.code}`;
  return `${related.id}  ${related.skillName}@${related.skillVersion}  ${paintStatus(related.status, colors)}${error}  ${colors.dim(durationText(related.duration))}`;
}

/**
 * Prints one execution readably: who ran what, how it ended (the error's code and message),
 * attempts and timings, the input and output as indented JSON, and the executions it is part of
 * (its parent) or started (its children, through `ctx.call`).
 */
export function printExecution(terminal: Terminal, view: ExecutionView): void {
  const { colors } = terminal;
  const { execution } = view;
  const field = (label: string, value: string) => terminal.print(`  ${colors.dim(label.padEnd(12))}${value}`);
  const block = (label: string, value: unknown) => {
    terminal.print(`  ${colors.dim(label)}`);
    for (const line of JSON.stringify(value, null, 2).split("\n")) terminal.print(`    ${line}`);
  };
  terminal.print(
    `${colors.bold(`${execution.skillName}@${execution.skillVersion}`)}  ${paintStatus(execution.status, colors)}  ${colors.dim(execution.id)}`,
  );
  if (execution.error !== null)
    field("error", `${colors.red(execution.error.code)}: ${execution.error.message}`);
  field("caller", execution.apiKeyId);
  if (execution.sessionId !== null) field("session", execution.sessionId);
  if (execution.idempotencyKey !== null) field("idempotency", execution.idempotencyKey);
  const { approval, progress } = execution;
  if (approval !== null && approval !== undefined) {
    field("approval", approval.reason);
    if (approval.decision === null) {
      const expires = approval.expiresAt === null ? "" : `, expires ${timeText(approval.expiresAt)}`;
      field(
        "",
        colors.yellow(`awaiting: skillbox approve ${execution.id} / reject ${execution.id}${expires}`),
      );
    } else {
      const by = approval.decidedBy === null ? "" : ` by ${approval.decidedBy}`;
      const comment = approval.comment === null ? "" : `: ${approval.comment}`;
      const edited = approval.inputEdited ? " (input edited)" : "";
      field("", `${approval.decision}${by} at ${timeText(approval.decidedAt)}${edited}${comment}`);
    }
  }
  if (progress !== null && progress !== undefined) field("progress", formatProgress(progress));
  field("attempts", String(execution.attempts));
  field("started", timeText(execution.createdAt));
  field("finished", timeText(execution.finishedAt));
  field("duration", durationText(execution.duration));
  if (execution.parentExecutionId !== null) {
    field(
      "parent",
      view.parent === undefined
        ? `${execution.parentExecutionId} ${colors.dim("(no longer recorded)")}`
        : relatedLine(view.parent, colors),
    );
  }
  block("input", execution.input);
  if (execution.status === "success" || execution.output !== null) block("output", execution.output);
  if (view.children.length > 0) {
    terminal.print(`  ${colors.dim(`children (${view.children.length}, through ctx.call)`)}`);
    for (const child of view.children) terminal.print(`    ${relatedLine(child, colors)}`);
  }
}
