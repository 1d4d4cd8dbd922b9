import {
  EXECUTION_STATUSES,
  type ExecutionStatus,
  type ExecutionSummary,
  SkillboxError,
} from "@skillbox/core";
import { type Command, InvalidArgumentError } from "commander";
import { formatTable } from "../terminal/format-table.js";
import { printExecution } from "../terminal/print-execution.js";
import type { Colors } from "../terminal/terminal.js";
import { type CommandContext, resolveCommandConfig, withHost } from "./command-context.js";

interface ExecutionsOptions {
  skill?: string;
  status?: ExecutionStatus[];
  owner?: string;
  limit: number;
  json?: boolean;
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

function statusCell(execution: ExecutionSummary, colors: Colors): string {
  if (execution.status === "success") return colors.green(execution.status);
  if (execution.status === "running" || execution.status === "pending") return colors.cyan(execution.status);
  return colors.red(execution.error ? `${execution.status} ${execution.error.code}` : execution.status);
}

/**
 * `skillbox executions`: the audit trail, newest first, as summaries (bodies as previews);
 * `skillbox executions <id>` shows one execution: input, output, error, attempts, timings, and
 * its parent and children (`ctx.call`); with `--json`, its full record.
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
    .action(async (id: string | undefined, options: ExecutionsOptions, command: Command) => {
      const config = await resolveCommandConfig(command);
      if (id !== undefined) {
        const view = await withHost(config, async (host) => {
          const execution = host.executor.getExecution(id);
          if (execution === undefined) return undefined;
          const parentId = execution.parentExecutionId;
          return {
            execution,
            parent: parentId === null ? undefined : host.executor.getExecution(parentId),
            children: host.executor
              .listExecutionSummaries({ parentExecutionId: id, limit: 1000, previewLength: 0 })
              .reverse(),
          };
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
      const executions = await withHost(config, async (host) =>
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
      const { colors } = terminal;
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
      for (const line of formatTable(headers, rows, colors)) terminal.print(line);
    });
}
