import type { Command } from "commander";
import { type CommandContext, resolveCommandConfig, withHost } from "./command-context.js";

/**
 * `skillbox cancel <id> [--reason <text>]`: cancels an execution that has not ended — queued,
 * awaiting approval or running, on this host's database or, with a queue, on whichever worker
 * of the deployment runs it (its handler is stopped there). Prints the execution's status once
 * the cancel is recorded (an execution that had ended already keeps its outcome); `--json`
 * prints its record. An unknown id is `EXECUTION_NOT_FOUND`, exit 1.
 */
export function registerCancelCommand(program: Command, context: CommandContext): void {
  program
    .command("cancel")
    .description("cancel an execution that has not ended (queued, awaiting approval or running)")
    .argument("<id>", "the execution id")
    .option("--reason <text>", "why, recorded with the cancellation")
    .option("--json", "print the execution record")
    .action(async (id: string, options: { reason?: string; json?: boolean }, command: Command) => {
      const config = await resolveCommandConfig(command);
      const execution = await withHost(config, (host) =>
        host.executor.cancel(id, options.reason === undefined ? {} : { reason: options.reason }),
      );
      if (options.json) context.terminal.printJson(execution);
      else
        context.terminal.print(
          `${execution.id} (${execution.skillName}@${execution.skillVersion}): ${execution.status}`,
        );
    });
}
