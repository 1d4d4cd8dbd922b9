import type { SkillExecution } from "@skillbox/core";
import { type Command, InvalidArgumentError } from "commander";
import { currentUserName } from "../host/current-user-name.js";
import { usageError } from "../usage-error.js";
import { type CommandContext, resolveCommandConfig, withHost } from "./command-context.js";

interface DecisionOptions {
  by?: string;
  comment?: string;
  reason?: string;
  input?: string;
  json?: boolean;
}

function parseName(value: string): string {
  if (value.trim() === "") throw new InvalidArgumentError("must not be empty");
  return value;
}

function parseEditedInput(text: string | undefined): { input?: unknown } {
  if (text === undefined) return {};
  try {
    return { input: JSON.parse(text) };
  } catch (error) {
    throw usageError("INPUT_INVALID", `--input is not valid JSON: ${(error as Error).message}`);
  }
}

function summary(verb: string, execution: SkillExecution): string {
  const label = `${execution.skillName}@${execution.skillVersion}`;
  return verb === "approved"
    ? `approved ${execution.id} (${label}): ${execution.status}; a \`skillbox serve\` or \`dev\` on this database runs it`
    : `rejected ${execution.id} (${label})`;
}

/**
 * `skillbox approve <id>` and `skillbox reject <id>`: decide an execution awaiting approval,
 * recorded with who decided (`--by`, default the OS user), when and why. An approved one goes
 * back to `queued` and a serving host on the same database runs it; a rejected one ends
 * `rejected`. Deciding one that does not wait (twice, finished, expired) fails with core's
 * `APPROVAL_NOT_PENDING` and changes nothing. This command's host never runs queued work.
 */
export function registerDecisionCommands(program: Command, context: CommandContext): void {
  program
    .command("approve")
    .description(
      "approve an execution awaiting approval; a `skillbox serve` or `dev` on this database then runs it",
    )
    .argument("<id>", "the execution id (`skillbox executions --status awaiting_approval` lists them)")
    .option("--comment <text>", "a note recorded with the approval")
    .option("--input <json>", "run it with this input instead (validated against the skill's schema)")
    .option("--by <name>", "who approves (default: the OS user)", parseName)
    .option("--json", "print the execution record")
    .action(async (id: string, options: DecisionOptions, command: Command) => {
      const config = await resolveCommandConfig(command);
      const edited = parseEditedInput(options.input);
      const execution = await withHost(config, (host) =>
        host.executor.approve(id, {
          by: options.by ?? currentUserName(),
          ...edited,
          ...(options.comment === undefined ? {} : { comment: options.comment }),
        }),
      );
      if (options.json) context.terminal.printJson(execution);
      else context.terminal.print(summary("approved", execution));
    });
  program
    .command("reject")
    .description("reject an execution awaiting approval: it ends `rejected` without running")
    .argument("<id>", "the execution id (`skillbox executions --status awaiting_approval` lists them)")
    .option("--reason <text>", "why, recorded with the rejection (and shown to the caller)")
    .option("--by <name>", "who rejects (default: the OS user)", parseName)
    .option("--json", "print the execution record")
    .action(async (id: string, options: DecisionOptions, command: Command) => {
      const config = await resolveCommandConfig(command);
      const execution = await withHost(config, (host) =>
        host.executor.reject(id, {
          by: options.by ?? currentUserName(),
          ...(options.reason === undefined ? {} : { reason: options.reason }),
        }),
      );
      if (options.json) context.terminal.printJson(execution);
      else context.terminal.print(summary("rejected", execution));
    });
}
