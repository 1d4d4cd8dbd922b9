import { createConsoleLogger, createSkillHost, SkillboxError, type SkillExecution } from "@skillbox/core";
import {
  createDistributedHost,
  DistributedExecutions,
  type DistributedHost,
  openRecordStore,
} from "@skillbox/distributed";
import type { ContainerRuntime } from "@skillbox/sandbox";
import type { ResolvedConfig } from "../config/load-config.js";
import type { CliExecutorOptions, CliHost, CliHostOptions } from "./open-cli-host.js";

/** What {@link openDistributedCliHost} gets from `openCliHost`: the parts every host shares. */
export interface DistributedCliHostOptions extends CliHostOptions {
  containerRuntime: ContainerRuntime;
  executorOptions: CliExecutorOptions;
}

/**
 * A host of a distributed deployment for the CLI. With a queue: `createDistributedHost` over the
 * configured database (PostgreSQL, or a SQLite file shared by processes of one machine) and the
 * queue's Redis, with this command's role — one-shot commands (`queue: false`) are API hosts
 * without a sweeper, so a command that exits leaves nothing half-done. The registry is in
 * memory: every host loads its own folders. Without a queue, a PostgreSQL database still
 * answers reads, cancels and rejections; submitting and approving (which dispatch) are
 * `CONFIG_INVALID` naming `--queue`.
 */
export async function openDistributedCliHost(
  config: ResolvedConfig,
  options: DistributedCliHostOptions,
): Promise<CliHost> {
  const { containerRuntime, executorOptions } = options;
  if (config.queue === undefined) return openRecordOnlyHost(config, options);
  const oneShot = options.queue === false;
  const host = await createDistributedHost({
    ...executorOptions,
    database: config.database,
    queue: config.queue,
    ...(config.queuePrefix === undefined ? {} : { prefix: config.queuePrefix }),
    role: options.role ?? "api",
    queueWorker: {
      queues: config.worker.queues,
      concurrency: config.worker.concurrency,
      ...(config.worker.leaseMs === undefined ? {} : { leaseMs: config.worker.leaseMs }),
      ...(options.onJob === undefined ? {} : { onJob: options.onJob }),
    },
    ...(oneShot ? { sweeper: false as const } : {}),
  });
  return wrap(host, containerRuntime, host);
}

function wrap(
  parts: Pick<DistributedHost, "registry" | "executor" | "close">,
  containerRuntime: ContainerRuntime,
  distributed: DistributedHost | undefined,
): CliHost {
  return {
    registry: parts.registry,
    executor: parts.executor,
    containerRuntime,
    distributed,
    close: (closeOptions) => parts.close(closeOptions),
  };
}

function needsQueue(action: string): SkillboxError {
  return new SkillboxError(
    "CONFIG_INVALID",
    `${action} needs the deployment's queue: give --queue redis://host:6379 (or SKILLBOX_QUEUE, or the config's \`queue\`); a PostgreSQL database alone serves reads`,
    { data: { setting: "queue" } },
  );
}

/** The shared record's executions without a queue: what would dispatch is refused before anything is recorded. */
class RecordOnlyExecutions extends DistributedExecutions {
  override async submit(): Promise<string> {
    throw needsQueue("Running a skill");
  }

  override async approve(): Promise<SkillExecution> {
    throw needsQueue("Approving an execution (it runs next)");
  }
}

/** A host over a PostgreSQL record without a queue: reads, cancels and rejections only. */
async function openRecordOnlyHost(
  config: ResolvedConfig,
  options: DistributedCliHostOptions,
): Promise<CliHost> {
  const logger = options.executorOptions.logger;
  const store = await openRecordStore(config.database);
  try {
    const executions = new RecordOnlyExecutions({
      store,
      // Never reached: submit and approve are refused before anything is recorded.
      dispatcher: {
        add: async () => {
          throw needsQueue("Dispatching an execution");
        },
      },
      logger: logger ?? createConsoleLogger(),
      inputHashKey: await store.inputHashKey(),
    });
    await executions.start();
    const local = createSkillHost({
      ...options.executorOptions,
      database: ":memory:",
      queue: false,
      backend: executions,
    });
    let closing: Promise<void> | undefined;
    return wrap(
      {
        registry: local.registry,
        executor: local.executor,
        close(closeOptions) {
          closing ??= (async () => {
            await local.close(closeOptions);
            await executions.close();
            await store.close();
          })();
          return closing;
        },
      },
      options.containerRuntime,
      undefined,
    );
  } catch (error) {
    await store.close();
    throw error;
  }
}
