import { SkillboxError } from "@skillbox/core";
import type { ClaimingWorkerJobReport } from "@skillbox/distributed";
import type { ResolvedConfig } from "../config/load-config.js";
import type { CliHost } from "../host/open-cli-host.js";
import { errorCodeOf } from "../terminal/format-error-line.js";
import type { LiveLog } from "../terminal/live-log.js";

/** What {@link startQueueWorker} says in its ready line. */
interface WorkerLineOptions {
  /** The folders the skills came from, as the log shows them. */
  folderList: string;
  watch: boolean;
  /** No API on this host (`worker`): the worker's stop closes the executor too (else the server's does, after its requests). */
  alone: boolean;
}

/**
 * Logs what became of every job a worker took: an execution it ran and committed gets the live
 * log's `executed` line (read back from the shared record, as callers see it); a run whose claim
 * was lost, refused or stopped gets a `job` line. Jobs that ran nothing (`unavailable`: another
 * worker holds or ended the execution) stay quiet: at-least-once delivery makes them routine.
 */
export function workerJobLogger(
  host: () => CliHost | undefined,
  log: LiveLog,
): (report: ClaimingWorkerJobReport) => void {
  return ({ executionId, result }) => {
    if (result === "unavailable" || result === "paused") return;
    if (result !== "committed") {
      log.line("job", `${executionId} ${result}`);
      return;
    }
    const store = host()?.distributed?.store;
    void store
      ?.get(executionId)
      .then((execution) => {
        if (execution !== undefined) log.executed(execution);
      })
      .catch((error: unknown) => {
        log.line(
          "error",
          `reading execution ${executionId} failed: ${errorCodeOf(error)}: ${(error as Error).message}`,
        );
      });
  };
}

/**
 * Starts the host's queue worker once its skills are loaded (a worker takes no job it has no
 * code for), prints `worker <id> ready: queues …, concurrency …, N skill version(s)` — the line
 * scripts and tests wait for — and returns how to stop it: it stops taking jobs, gives the runs
 * under way the shutdown grace (`executor.shutdownGraceMs`), then stops them (their leases
 * recover them elsewhere). A `dev` worker re-describes its skills' content hashes with every
 * heartbeat, so `skillbox doctor` sees edits.
 */
export async function startQueueWorker(
  host: CliHost,
  config: ResolvedConfig,
  log: LiveLog,
  options: WorkerLineOptions,
): Promise<{ name: string; run: () => Promise<void> }> {
  const distributed = host.distributed;
  if (distributed === undefined) {
    throw new SkillboxError(
      "CONFIG_INVALID",
      "A worker needs the deployment's queue: give --queue redis://host:6379",
    );
  }
  await distributed.startWorker();
  const worker = distributed.worker;
  const versions = host.registry.list().length;
  log.line(
    "worker",
    `worker ${worker?.workerId ?? "?"} ready: queues ${config.worker.queues.join(", ")}, concurrency ${config.worker.concurrency}, ${versions} skill version(s) from ${options.folderList}` +
      (options.watch ? "; edits reload live" : ""),
  );
  const grace = { graceMs: config.executor.shutdownGraceMs };
  return {
    name: "worker",
    run: async () => {
      await worker?.close(grace);
      if (options.alone) await host.executor.close(grace);
    },
  };
}
