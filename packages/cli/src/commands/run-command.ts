import { executionFailure, SkillboxError } from "@skillbox/core";
import { type Command, InvalidArgumentError } from "commander";
import { withSkillNameSuggestions } from "../host/suggest-skill-names.js";
import { readRunInput } from "../input/read-run-input.js";
import { type CommandContext, resolveCommandConfig, withLoadedSkills } from "./command-context.js";

interface RunOptions {
  input?: string;
  inputFile?: string;
  timeout?: number;
  session?: string;
  json?: boolean;
}

function parseMilliseconds(value: string): number {
  const milliseconds = Number(value);
  if (!Number.isInteger(milliseconds) || milliseconds <= 0) {
    throw new InvalidArgumentError("must be a positive whole number of milliseconds");
  }
  return milliseconds;
}

/**
 * `skillbox run <name[@range]>`: loads the folders (`--dir` or the config's), executes once
 * (recorded in the audit trail like any other call) and prints the output; a failed execution
 * prints its code and exits 1.
 */
export function registerRunCommand(program: Command, context: CommandContext): void {
  program
    .command("run")
    .description("execute a skill and print its output (exit 1 when the execution fails)")
    .argument(
      "<skill>",
      "skill name, optionally with a version range (echo@^1); --dir <folder> to load another folder",
    )
    .option("--input <json>", "the input as JSON")
    .option("--input-file <file>", "read the input JSON from a file (- for stdin)")
    .option("--timeout <ms>", "per-attempt timeout; can only lower the skill's own", parseMilliseconds)
    .option("--session <id>", "session id recorded with the execution")
    .option("--json", "print the whole execution record")
    .action(async (reference: string, options: RunOptions, command: Command) => {
      const config = await resolveCommandConfig(command);
      // Read before loading: a bad --input should fail fast, not after the folders loaded.
      const input = await readRunInput(options);
      const { terminal } = context;
      const execution = await withLoadedSkills(context, config, async (host) => {
        const progress = terminal.progress(`running ${reference}`);
        try {
          return await host.executor.execute(reference, input, {
            apiKeyId: config.owner,
            sessionId: options.session,
            timeoutMs: options.timeout,
          });
        } catch (error) {
          throw withSkillNameSuggestions(error, reference, () =>
            host.registry.list(config.owner).map((skill) => skill.name),
          );
        } finally {
          progress.stop();
        }
      });
      if (options.json) terminal.printJson(execution);
      const error = executionFailure(execution);
      if (error === undefined) {
        if (!options.json) terminal.printJson(execution.output ?? null);
        return;
      }
      // Runtimes and the executor often name the skill already (`boxed@0.1.0 exited …`): name it once.
      const label = `${execution.skillName}@${execution.skillVersion}`;
      terminal.fail(
        new SkillboxError(
          error.code,
          error.message.startsWith(label) ? error.message : `${label}: ${error.message}`,
        ),
      );
      context.exitCode = 1;
    });
}
