import {
  createConsoleLogger,
  isPostgresUrl,
  openDatabase,
  SkillExecutor,
  type SkillExecutorCloseOptions,
  type SkillExecutorOptions,
  type SkillLogger,
  SkillRegistry,
  type TelemetryOptions,
} from "@skillbox/core";
import type { ClaimingWorkerJobReport, DistributedHost, DistributedRole } from "@skillbox/distributed";
import {
  type ContainerRuntime,
  createContainerRuntime,
  createSandboxProvider,
  SandboxRunner,
} from "@skillbox/sandbox";
import type { ResolvedConfig } from "../config/load-config.js";

/** Options of {@link openCliHost}. */
export interface CliHostOptions {
  /** The logger handlers see as `ctx.logger` (default: JSON lines on stderr at `SKILLBOX_LOG_LEVEL`, else warn). */
  logger?: SkillLogger;
  /** Where warm-pool start failures are reported. */
  onWarmPoolError?: (error: unknown, skillLabel: string) => void;
  /**
   * `false`: this host never runs queued (submitted or approved) executions — for one-shot
   * commands, which would otherwise start work they cannot see to the end. Default: the
   * executor's background queue, for the serving hosts (`dev`, `serve`, `mcp`).
   */
  queue?: false;
  /**
   * Whether execution spans carry the (redacted) input and output; `skillbox serve`/`dev` pass
   * the config's `telemetry.recordInputs` / `recordOutputs` when they export telemetry.
   */
  telemetry?: TelemetryOptions;
  /**
   * With a queue configured: what this host of the deployment does (default `api`; `serve`
   * passes its `--role`). Ignored on a single host.
   */
  role?: DistributedRole;
  /** A worker's report of every job it took (`serve --role worker|both` logs the executions it ran). */
  onJob?: (report: ClaimingWorkerJobReport) => void;
  /**
   * Run here, whatever the config says (`skillbox test`): a SQLite database as configured, an
   * in-memory one in place of a PostgreSQL URL, never a queue.
   */
  local?: true;
}

/** The registry, executor and container runtime a command works with, over the configured database. */
export interface CliHost {
  registry: SkillRegistry;
  executor: SkillExecutor;
  containerRuntime: ContainerRuntime;
  /** The host of the distributed deployment under this one, when a queue is configured (`doctor`, workers). */
  distributed: DistributedHost | undefined;
  /**
   * Waits for running executions (up to `graceMs`, then cancels them, recorded `cancelled`), runs
   * the close handlers (a browser skill's Chromium, for one), stops sandboxes, closes the database.
   */
  close(options?: SkillExecutorCloseOptions): Promise<void>;
}

/** Whether `config` names a distributed deployment (a queue, or a PostgreSQL record) that this command uses. */
export function usesDeployment(config: ResolvedConfig, options: CliHostOptions = {}): boolean {
  return options.local !== true && (config.queue !== undefined || isPostgresUrl(config.database));
}

/**
 * The host `config` asks for: a host of the distributed deployment when it names one
 * (`openDistributedCliHost`, loaded only then, so a single host never loads BullMQ or pg), else
 * the single host of {@link openCliHost}. The serving commands call the two directly, so that a
 * single host's folders start loading in the same turn as its queue (see `openCliHost`).
 */
export async function openConfiguredHost(
  config: ResolvedConfig,
  options: CliHostOptions = {},
): Promise<CliHost> {
  if (!usesDeployment(config, options)) return openCliHost(config, options);
  const { openDistributedCliHost } = await import("./open-distributed-cli-host.js");
  const containerRuntime = createCliContainerRuntime(config, options);
  return openDistributedCliHost(config, {
    ...options,
    containerRuntime,
    executorOptions: cliExecutorOptions(config, options, containerRuntime),
  });
}

/** What every host's executor gets from the config, on one host or many. */
export type CliExecutorOptions = Omit<SkillExecutorOptions, "registry" | "queue">;

/**
 * Opens the configured database with a registry and an executor with the `container` runtime
 * registered, so `runtime: "container"` skills run (the engine is found on their first run).
 * `skillbox enable`/`disable` survive later loads: the loader keeps an operator's toggle.
 *
 * This is the single host (SQLite) — with a queue or a `postgres://` database, see
 * {@link openConfiguredHost}. It stays synchronous on purpose: its executor's background queue
 * starts what was queued at once, and the caller must start loading the folders (whose handler
 * resolver those runs need) before anything else gets a turn.
 */
export function openCliHost(config: ResolvedConfig, options: CliHostOptions = {}): CliHost {
  const containerRuntime = createCliContainerRuntime(config, options);
  const executorOptions = cliExecutorOptions(config, options, containerRuntime);
  const database = openDatabase({ path: isPostgresUrl(config.database) ? ":memory:" : config.database });

  const registry = new SkillRegistry({ database });
  const executor = new SkillExecutor({
    ...executorOptions,
    registry,
    ...(options.queue === false
      ? { queue: false as const }
      : config.executor.queue === undefined
        ? {}
        : { queue: config.executor.queue }),
  });
  let closing: Promise<void> | undefined;
  return {
    registry,
    executor,
    containerRuntime,
    distributed: undefined,
    close(closeOptions) {
      closing ??= (async () => {
        // The executor closes its runtimes (the container runtime included) after the last execution.
        await executor.close(closeOptions);
        if (database.open) database.close();
      })();
      return closing;
    },
  };
}

/** What every host's executor gets from the config: the container runtime, logger, limits, telemetry. */
function cliExecutorOptions(
  config: ResolvedConfig,
  options: CliHostOptions,
  containerRuntime: ContainerRuntime,
): CliExecutorOptions {
  return {
    runtimes: [containerRuntime],
    logger: options.logger ?? createConsoleLogger(),
    maxAttemptTimeoutMs: config.executor.maxAttemptTimeoutMs,
    ...(config.executor.approvalTimeoutMs === undefined
      ? {}
      : { approvalTimeoutMs: config.executor.approvalTimeoutMs }),
    ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }),
  };
}

/** The `container` runtime over the configured sandbox provider, image and warm pools. */
function createCliContainerRuntime(config: ResolvedConfig, options: CliHostOptions): ContainerRuntime {
  const runner =
    config.sandbox.runtime === undefined
      ? undefined
      : new SandboxRunner({ provider: createSandboxProvider(config.sandbox.runtime) });
  return createContainerRuntime({
    ...(runner === undefined ? {} : { runner }),
    ...(config.sandbox.image === undefined ? {} : { defaultImage: config.sandbox.image }),
    warmPoolSize: config.sandbox.warmPoolSize,
    onWarmPoolError: (error, skill) => options.onWarmPoolError?.(error, `${skill.name}@${skill.version}`),
  });
}
