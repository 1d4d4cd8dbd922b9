import { SkillboxError } from "@skillbox/core";
import type { DistributedRole } from "@skillbox/distributed";
import { type Command, InvalidArgumentError, Option } from "commander";
import { executionCountSchema, leaseSchema } from "../config/config-schema.js";
import type { ResolvedConfig } from "../config/load-config.js";

/** `--role`, `--queues`, `--concurrency`, `--lease-ms` as given. */
export interface WorkerFlags {
  role?: DistributedRole;
  queues?: string[];
  concurrency?: number;
  leaseMs?: number;
}

function parseQueues(value: string): string[] {
  const queues = value
    .split(",")
    .map((queue) => queue.trim())
    .filter((queue) => queue !== "");
  if (queues.length === 0 || queues.some((queue) => !/^[A-Za-z0-9_.-]+$/.test(queue))) {
    throw new InvalidArgumentError("must be queue names separated by commas, such as default,sandbox");
  }
  return queues;
}

function parseConcurrency(value: string): number {
  const parsed = executionCountSchema.safeParse(Number(value));
  if (value.trim() === "" || !parsed.success) {
    throw new InvalidArgumentError("must be a whole number of executions from 1 to 10000");
  }
  return parsed.data;
}

function parseLease(value: string): number {
  const parsed = leaseSchema.safeParse(Number(value));
  if (value.trim() === "" || !parsed.success) {
    throw new InvalidArgumentError("must be a whole number of milliseconds of at least 1000");
  }
  return parsed.data;
}

/** Declares the worker flags on `command` (`worker`; `serve` and `dev` also get `--role`). */
export function addWorkerFlags(command: Command, options: { role: boolean }): Command {
  if (options.role) {
    command.addOption(
      new Option(
        "--role <role>",
        "with a queue: api (serve requests only), worker (run queued executions only) or both (default)",
      ).choices(["api", "worker", "both"]),
    );
  }
  return command
    .option(
      "--queues <names>",
      "queues to take executions from, separated by commas (default: the config's worker.queues, else default)",
      parseQueues,
    )
    .option(
      "--concurrency <count>",
      "most executions run at once (default: the config's worker.concurrency, else 16)",
      parseConcurrency,
    )
    .option(
      "--lease-ms <ms>",
      "how long a claim lasts unrenewed (default: the config's worker.leaseMs, else 30000)",
      parseLease,
    );
}

/**
 * The config with the worker flags applied. The flags only mean something in a distributed
 * deployment: given without a queue they are `CONFIG_INVALID` naming the flag and `--queue`.
 */
export function applyWorkerFlags(
  config: ResolvedConfig,
  flags: WorkerFlags,
  command: string,
): ResolvedConfig {
  if (config.queue === undefined) {
    const given = [
      flags.role === undefined ? undefined : "--role",
      flags.queues === undefined ? undefined : "--queues",
      flags.concurrency === undefined ? undefined : "--concurrency",
      flags.leaseMs === undefined ? undefined : "--lease-ms",
    ].filter((flag) => flag !== undefined);
    if (command === "worker" || given.length > 0) {
      const what = command === "worker" ? "skillbox worker" : `${given.join(", ")} of skillbox ${command}`;
      throw new SkillboxError(
        "CONFIG_INVALID",
        `${what} needs the deployment's queue: give --queue redis://host:6379 (or SKILLBOX_QUEUE, or the config's \`queue\`)`,
        { data: { setting: "queue" } },
      );
    }
    return config;
  }
  return {
    ...config,
    worker: {
      queues: flags.queues ?? config.worker.queues,
      concurrency: flags.concurrency ?? config.worker.concurrency,
      leaseMs: flags.leaseMs ?? config.worker.leaseMs,
    },
  };
}
