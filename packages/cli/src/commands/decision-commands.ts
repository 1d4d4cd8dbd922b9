import type { SkillExecution, SkillExecutor } from "@skillbox/core";
import { type Command, InvalidArgumentError } from "commander";
import type { ResolvedConfig } from "../config/load-config.js";
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

/**
 * Applies a decision with a host over the configured database, `by` the one who decides, and
 * prints the decided execution: its record with `--json`, else the line `describe` makes of it.
 */
async function decide(
  context: CommandContext,
  config: ResolvedConfig,
  options: DecisionOptions,
  apply: (executor: SkillExecutor, by: string) => Promise<SkillExecution>,
  describe: (execution: SkillExecution, label: string) => string,
): Promise<void> {
  const by = options.by ?? currentUserName();
  const execution = await withHost(config, (host) => apply(host.executor, by));
  if (options.json) context.terminal.printJson(execution);
  else context.terminal.print(describe(execution, `${execution.skillName}@${execution.skillVersion}`));
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
      await decide(
        context,
        config,
        options,
        (executor, by) =>
          executor.approve(id, {
            by,
            ...edited,
            ...(options.comment === undefined ? {} : { comment: options.comment }),
          }),
        (execution, label) =>
          `approved ${execution.id} (${label}): ${execution.status}; a \`skillbox serve\` or \`dev\` on this database runs it`,
      );
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
      await decide(
        context,
        config,
        options,
        (executor, by) =>
          executor.reject(id, { by, ...(options.reason === undefined ? {} : { reason: options.reason }) }),
        (execution, label) => `rejected ${execution.id} (${label})`,
      );
    });
}
