import { isSkillboxError, SkillboxError, type SkillExecution } from "@skillbox/core";
import type { Command } from "commander";
import { EXIT_CODES } from "../exit-codes.js";
import { parseMilliseconds } from "../input/parse-milliseconds.js";
import { followProgress } from "../terminal/follow-progress.js";
import { printOutcome } from "../terminal/print-outcome.js";
import { type CommandContext, resolveCommandConfig, withHost } from "./command-context.js";

interface WaitOptions {
  timeout?: number;
  json?: boolean;
}

/**
 * `skillbox wait <id>`: waits until an execution ends — one submitted with `run --async`, or
 * one awaiting approval — and prints it as `run` does, with `run`'s exit code for its status.
 * It only watches: a serving host on the same database (`skillbox serve` / `dev`) runs the
 * execution. `--timeout` gives up first (`WAIT_TIMEOUT`, exit 3: it has not ended).
 */
export function registerWaitCommand(program: Command, context: CommandContext): void {
  program
    .command("wait")
    .description(
      "wait for an execution to end and print it as run does (a `skillbox serve` or `dev` on this database runs it)",
    )
    .argument(
      "<id>",
      "an execution id (from `run --async`, `run` of a skill awaiting approval, `executions`)",
    )
    .option("--timeout <ms>", "give up after this long (exit 3; the execution goes on)", parseMilliseconds)
    .option("--json", "print the whole execution record")
    .action(async (id: string, options: WaitOptions, command: Command) => {
      const config = await resolveCommandConfig(command);
      const { terminal } = context;
      const execution = await withHost(config, async (host): Promise<SkillExecution | undefined> => {
        const progress = terminal.progress(`waiting for ${id}`);
        const stopFollowing = followProgress(host.executor, id, progress, id);
        try {
          return await host.executor.wait(
            id,
            options.timeout === undefined ? {} : { timeoutMs: options.timeout },
          );
        } catch (error) {
          if (!isSkillboxError(error) || error.code !== "WAIT_TIMEOUT") throw error;
          const current = (error.data as { execution?: SkillExecution } | undefined)?.execution;
          if (options.json && current !== undefined) terminal.printJson(current);
          terminal.fail(
            new SkillboxError(
              "WAIT_TIMEOUT",
              `${id} has not ended within ${options.timeout} ms; it goes on (\`skillbox wait ${id}\` again, or \`skillbox executions ${id}\`)`,
            ),
          );
          context.exitCode = EXIT_CODES.pending;
          return undefined;
        } finally {
          stopFollowing();
          progress.stop();
        }
      });
      if (execution !== undefined) printOutcome(context, execution, options.json === true);
    });
}
