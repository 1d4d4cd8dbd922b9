import { isPostgresUrl, redactedUrl, SkillboxError } from "@skillbox/core";
import type { DoctorReport } from "@skillbox/distributed";
import type { Command } from "commander";
import type { ResolvedConfig } from "../config/load-config.js";
import { EXIT_CODES } from "../exit-codes.js";
import type { Terminal } from "../terminal/terminal.js";
import { type CommandContext, resolveCommandConfig } from "./command-context.js";

/** How many characters of a content hash identify it in the human output (as `git` abbreviates). */
const HASH_CHARACTERS = 12;

function seconds(milliseconds: number): string {
  return `${(milliseconds / 1000).toFixed(1)} s`;
}

/** The human form of a report: one line per part, each worker with its skills below it. */
function printReport(
  terminal: Terminal,
  config: ResolvedConfig & { queue: string },
  report: DoctorReport,
): void {
  const { colors } = terminal;
  const where = isPostgresUrl(config.database) ? redactedUrl(config.database) : config.database;
  const { database, redis } = report;
  terminal.print(
    `database  ${database.dialect} ${where}: ` +
      (database.reachable
        ? `reachable, clock skew ${database.clockSkewMs ?? 0} ms`
        : colors.red(`unreachable (${database.error ?? "no answer"})`)),
  );
  terminal.print(
    `redis     ${redactedUrl(config.queue)}: ` +
      (redis.reachable
        ? `version ${redis.version ?? "unknown"}, maxmemory-policy ${redis.maxmemoryPolicy ?? "unknown"}`
        : colors.red(`unreachable (${redis.error ?? "no answer"})`)),
  );
  for (const queue of report.queues) {
    terminal.print(
      `queue     ${queue.queue}: ${queue.waiting} waiting, ${queue.active} active, ${queue.delayed} delayed`,
    );
  }
  if (report.workers.length === 0) terminal.print("workers   none");
  for (const worker of report.workers) {
    terminal.print(
      `worker    ${worker.workerId} on ${worker.host} (pid ${worker.pid}): heartbeat ${seconds(worker.heartbeatAgeMs)} ago, ` +
        `${worker.running}/${worker.concurrency} running, queues ${worker.queues.join(", ")}`,
    );
    for (const skill of worker.skills) {
      terminal.print(
        `            ${skill.name}@${skill.version} ${skill.contentHash.slice(0, HASH_CHARACTERS)}`,
      );
    }
  }
  if (report.problems.length === 0) terminal.print(colors.green("healthy: no problems found"));
  for (const problem of report.problems) terminal.print(`${colors.red("problem")}   ${problem}`);
}

/**
 * `skillbox doctor [--json]`: the distributed deployment as an operator checks it — the database
 * (dialect, reachable, clock skew), the queue's Redis (version, `maxmemory-policy`), the depth of
 * each queue, every worker with its heartbeat age, load and skills (`name@version` and content
 * hash), and the problems found. Exits 0 when healthy, 1 when a problem is found.
 */
export function registerDoctorCommand(program: Command, context: CommandContext): void {
  program
    .command("doctor")
    .description(
      "check a distributed deployment: database, queue's Redis, queue depths, workers and their skills",
    )
    .option("--json", "print the report as JSON")
    .action(async (options: { json?: boolean }, command: Command) => {
      const config = await resolveCommandConfig(command);
      const queue = config.queue;
      if (queue === undefined) {
        throw new SkillboxError(
          "CONFIG_INVALID",
          "skillbox doctor checks a distributed deployment: give --queue redis://host:6379 (or SKILLBOX_QUEUE, or the config's `queue`) and --db postgres://…",
          { data: { setting: "queue" } },
        );
      }
      // Loaded on demand: BullMQ and pg are for distributed deployments only.
      const { readDoctorReport } = await import("../doctor/read-doctor-report.js");
      const report = await readDoctorReport({ ...config, queue });
      if (options.json) context.terminal.printJson({ ok: report.problems.length === 0, ...report });
      else printReport(context.terminal, { ...config, queue }, report);
      if (report.problems.length > 0) context.exitCode = EXIT_CODES.failure;
    });
}
