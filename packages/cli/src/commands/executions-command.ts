import {
  EXECUTION_STATUSES,
  type ExecutionStatus,
  type ExecutionSummary,
  isFinalExecutionStatus,
  SkillboxError,
} from "@skillbox/core";
import { type Command, InvalidArgumentError } from "commander";
import { formatTable } from "../terminal/format-table.js";
import { paintStatus } from "../terminal/paint-status.js";
import { printExecution } from "../terminal/print-execution.js";
import type { Colors } from "../terminal/terminal.js";
import { type CommandContext, resolveCommandConfig, withHost } from "./command-context.js";
import { watchExecutionList, watchOneExecution } from "./watch-executions.js";

interface ExecutionsOptions {
  skill?: string;
  status?: ExecutionStatus[];
  owner?: string;
  limit: number;
  json?: boolean;
  watch?: boolean;
}

const STATUSES: readonly ExecutionStatus[] = EXECUTION_STATUSES;

function parseStatus(value: string, previous: ExecutionStatus[] | undefined): ExecutionStatus[] {
  const statuses = value.split(",").map((status) => status.trim());
  for (const status of statuses) {
    if (!STATUSES.includes(status as ExecutionStatus)) {
      throw new InvalidArgumentError(`"${status}" is not a status; use one of ${STATUSES.join(", ")}`);
    }
  }
  return [...(previous ?? []), ...(statuses as ExecutionStatus[])];
}

function parseLimit(value: string): number {
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new InvalidArgumentError("must be a whole number from 1 to 1000");
  }
  return limit;
}

/** The latest progress as the listing shows it: a percentage when it has a total. */
function progressSuffix(progress: ExecutionSummary["progress"]): string {
  if (progress === null || progress === undefined) return "";
  if (progress.total === undefined || !(progress.total > 0)) return ` ${progress.progress}`;
  return ` ${Math.floor((Math.min(progress.progress, progress.total) / progress.total) * 100)}%`;
}

/** The status, with the progress while it has not ended, or the error code of a failed end. */
function statusCell(execution: ExecutionSummary, colors: Colors): string {
  const { status, error } = execution;
  let detail = "";
  if (!isFinalExecutionStatus(status)) detail = progressSuffix(execution.progress);
  else if (status !== "success" && error) detail = ` ${error.code}`;
  return paintStatus(status, colors, `${status}${detail}`);
}

/** The listing's table lines. */
function tableLines(executions: ExecutionSummary[], colors: Colors): string[] {
  const rows = executions.map((execution) => [
    execution.id,
    execution.createdAt.replace("T", " ").slice(0, 19),
    `${execution.skillName}@${execution.skillVersion}`,
    statusCell(execution, colors),
    execution.duration === null ? "-" : `${execution.duration.toFixed(1)} ms`,
    String(execution.attempts),
    execution.apiKeyId,
  ]);
  const headers = ["ID", "CREATED (UTC)", "SKILL", "STATUS", "DURATION", "ATTEMPTS", "CALLER"];
  return formatTable(headers, rows, colors);
}

/**
 * `skillbox executions`: the audit trail, newest first, as summaries (bodies as previews);
 * `skillbox executions <id>` shows one execution: input, output, error, attempts, timings, and
 * its parent and children (`ctx.call`); with `--json`, its full record. `--watch` follows the
 * changes (see `watch-executions.ts`).
 */
export function registerExecutionsCommand(program: Command, context: CommandContext): void {
  program
    .command("executions")
    .description("list recorded executions, newest first; with an id, show that one in full")
    .argument(
      "[id]",
      "an execution id: show its input, output, error, attempts, timings, parent and children (--json: its full record)",
    )
    .option("--skill <name>", "only executions of this skill")
    .option("--status <status>", `only these statuses (comma-separated: ${STATUSES.join(", ")})`, parseStatus)
    .option("--owner <id>", "only executions by this caller")
    .option("--limit <count>", "how many to show (1-1000)", parseLimit, 20)
    .option(
      "--json",
      "print the execution summaries as JSON (bodies as previews), or with an id its full record",
    )
    .option(
      "--watch",
      "follow changes until Ctrl-C: on a terminal the list redraws; elsewhere one line per change (--json: one event per line); with an id, until it ends",
    )
    .action(async (id: string | undefined, options: ExecutionsOptions, command: Command) => {
      const config = await resolveCommandConfig(command);
      if (options.watch && id !== undefined) {
        await watchOneExecution(context, config, id, { json: options.json });
        return;
      }
      if (options.watch) {
        await watchExecutionList(context, config, options, (executions) =>
          tableLines(executions, context.terminal.colors),
        );
        return;
      }
      if (id !== undefined) {
        const view = await withHost(config, async (host) => {
          const execution = await host.executor.getExecution(id);
          if (execution === undefined) return undefined;
          const parentId = execution.parentExecutionId;
          const [parent, children] = await Promise.all([
            parentId === null ? undefined : host.executor.getExecution(parentId),
            host.executor.listExecutionSummaries({ parentExecutionId: id, limit: 1000, previewLength: 0 }),
          ]);
          return { execution, parent, children: children.reverse() };
        });
        if (view === undefined) {
          throw new SkillboxError(
            "EXECUTION_NOT_FOUND",
            `no execution "${id}"; \`skillbox executions\` lists the recorded ones`,
          );
        }
        if (options.json) context.terminal.printJson(view.execution);
        else printExecution(context.terminal, view);
        return;
      }
      const executions = await withHost(config, (host) =>
        // Summaries: a page of full records of big bodies would be held in memory at once.
        host.executor.listExecutionSummaries({
          skill: options.skill,
          status: options.status,
          owner: options.owner,
          limit: options.limit,
        }),
      );
      const { terminal } = context;
      if (options.json) {
        terminal.printJson(executions);
        return;
      }
      if (executions.length === 0) {
        terminal.print("no executions recorded");
        return;
      }
      for (const line of tableLines(executions, terminal.colors)) terminal.print(line);
    });
}
