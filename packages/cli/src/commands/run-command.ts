import type { SkillExecution } from "@skillbox/core";
import type { Command } from "commander";
import type { CliHost } from "../host/open-cli-host.js";
import { withSkillNameSuggestions } from "../host/suggest-skill-names.js";
import { parseMilliseconds } from "../input/parse-milliseconds.js";
import { readRunInput } from "../input/read-run-input.js";
import { followProgress } from "../terminal/follow-progress.js";
import { printOutcome } from "../terminal/print-outcome.js";
import type { Progress } from "../terminal/terminal.js";
import { type CommandContext, resolveCommandConfig, withLoadedSkills } from "./command-context.js";

interface RunOptions {
  input?: string;
  inputFile?: string;
  timeout?: number;
  session?: string;
  json?: boolean;
  async?: boolean;
}

/**
 * Follows the progress of the execution this command starts: the first top-level execution
 * the host starts is it (`ctx.call` children have a parent). Returns the function that stops.
 */
function followStartedExecution(host: CliHost, progress: Progress, label: string): () => void {
  if (!progress.live) return () => {};
  let stopFollowing = () => {};
  const onStarted = (execution: SkillExecution) => {
    if (execution.parentExecutionId !== null) return;
    host.executor.off("started", onStarted);
    stopFollowing = followProgress(host.executor, execution.id, progress, label);
  };
  host.executor.on("started", onStarted);
  return () => {
    host.executor.off("started", onStarted);
    stopFollowing();
  };
}

/**
 * `skillbox run <name[@range]>`: loads the folders (`--dir` or the config's), executes once
 * (recorded in the audit trail like any other call) and prints the output; a failed execution
 * prints its code and exits 1, one that awaits approval prints its id and exits 3. `--async`
 * submits it instead, prints the id and exits 0: a serving host (`skillbox serve` or `dev` on
 * the same database) runs it, and `skillbox wait <id>` prints the result. This command's own
 * host never runs queued work (see `withHost`).
 */
export function registerRunCommand(program: Command, context: CommandContext): void {
  program
    .command("run")
    .description(
      "execute a skill and print its output (exit 1 when the execution fails, 3 when it awaits approval)",
    )
    .argument(
      "<skill>",
      "skill name, optionally with a version range (echo@^1); --dir <folder> to load another folder",
    )
    .option("--input <json>", "the input as JSON")
    .option("--input-file <file>", "read the input JSON from a file (- for stdin)")
    .option("--timeout <ms>", "per-attempt timeout; can only lower the skill's own", parseMilliseconds)
    .option("--session <id>", "session id recorded with the execution")
    .option("--json", "print the whole execution record")
    .option(
      "--async",
      "submit the execution and print its id; a `skillbox serve` or `dev` on this database runs it (`skillbox wait <id>` for the result)",
    )
    .action(async (reference: string, options: RunOptions, command: Command) => {
      const config = await resolveCommandConfig(command);
      // Read before loading: a bad --input should fail fast, not after the folders loaded.
      const input = await readRunInput(options);
      const { terminal } = context;
      const executeOptions = {
        apiKeyId: config.owner,
        sessionId: options.session,
        timeoutMs: options.timeout,
      };
      const suggest = (host: CliHost, error: unknown) =>
        withSkillNameSuggestions(error, reference, () =>
          host.registry.list(config.owner).map((skill) => skill.name),
        );
      if (options.async) {
        const submitted = await withLoadedSkills(context, config, async (host) => {
          try {
            const id = await host.executor.submit(reference, input, executeOptions);
            return options.json ? await host.executor.getExecution(id) : id;
          } catch (error) {
            throw suggest(host, error);
          }
        });
        if (typeof submitted === "string") terminal.print(submitted);
        else terminal.printJson(submitted);
        return;
      }
      const execution = await withLoadedSkills(context, config, async (host) => {
        const progress = terminal.progress(`running ${reference}`);
        const stopFollowing = followStartedExecution(host, progress, reference);
        try {
          return await host.executor.execute(reference, input, executeOptions);
        } catch (error) {
          throw suggest(host, error);
        } finally {
          stopFollowing();
          progress.stop();
        }
      });
      printOutcome(context, execution, options.json === true);
    });
}
