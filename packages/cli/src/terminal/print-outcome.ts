import { executionFailure, isFinalExecutionStatus, SkillboxError, type SkillExecution } from "@skillbox/core";
import type { CommandContext } from "../commands/command-context.js";
import { EXIT_CODES } from "../exit-codes.js";

/**
 * Prints how an execution ended, as `skillbox run` and `skillbox wait` do, and sets the exit
 * code: the output JSON (exit 0), or `error CODE: name@version: message` (exit 1); `--json`
 * prints the whole record either way. One that has not ended (awaiting approval) prints its id
 * on stdout and how to decide it on stderr, and exits 3.
 */
export function printOutcome(context: CommandContext, execution: SkillExecution, json: boolean): void {
  const { terminal } = context;
  if (json) terminal.printJson(execution);
  const label = `${execution.skillName}@${execution.skillVersion}`;
  if (!isFinalExecutionStatus(execution.status)) {
    if (!json) terminal.print(execution.id);
    const reason = execution.approval?.reason;
    terminal.printDiagnostic(
      execution.status === "awaiting_approval"
        ? `${label} awaits approval${reason === undefined ? "" : `: ${reason}`}\n` +
            `  decide with \`skillbox approve ${execution.id}\` or \`skillbox reject ${execution.id}\`; ` +
            `\`skillbox wait ${execution.id}\` prints the result once a \`skillbox serve\` or \`dev\` on this database has run it`
        : `${label} is ${execution.status}; \`skillbox wait ${execution.id}\` prints the result`,
    );
    context.exitCode = EXIT_CODES.pending;
    return;
  }
  const error = executionFailure(execution);
  if (error === undefined) {
    if (!json) terminal.printJson(execution.output ?? null);
    return;
  }
  // Runtimes and the executor often name the skill already (`boxed@0.1.0 exited …`): name it once.
  terminal.fail(
    new SkillboxError(
      error.code,
      error.message.startsWith(label) ? error.message : `${label}: ${error.message}`,
    ),
  );
  context.exitCode = EXIT_CODES.failure;
}
