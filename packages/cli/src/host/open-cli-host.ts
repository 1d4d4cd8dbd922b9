import {
  createConsoleLogger,
  openDatabase,
  SkillExecutor,
  type SkillExecutorCloseOptions,
  type SkillLogger,
  SkillRegistry,
  type TelemetryOptions,
} from "@skillbox/core";
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
}

/** The registry, executor and container runtime a command works with, over the configured database. */
export interface CliHost {
  registry: SkillRegistry;
  executor: SkillExecutor;
  containerRuntime: ContainerRuntime;
  /**
   * Waits for running executions (up to `graceMs`, then cancels them, recorded `cancelled`), runs
   * the close handlers (a browser skill's Chromium, for one), stops sandboxes, closes the database.
   */
  close(options?: SkillExecutorCloseOptions): Promise<void>;
}

/**
 * Opens the configured database with a registry and an executor with the `container` runtime
 * registered, so `runtime: "container"` skills run (the engine is found on their first run).
 * `skillbox enable`/`disable` survive later loads: the loader keeps an operator's toggle.
 */
export function openCliHost(config: ResolvedConfig, options: CliHostOptions = {}): CliHost {
  const database = openDatabase({ path: config.database });
  const registry = new SkillRegistry({ database });
  const runner =
    config.sandbox.runtime === undefined
      ? undefined
      : new SandboxRunner({ provider: createSandboxProvider(config.sandbox.runtime) });
  const containerRuntime = createContainerRuntime({
    ...(runner === undefined ? {} : { runner }),
    ...(config.sandbox.image === undefined ? {} : { defaultImage: config.sandbox.image }),
    warmPoolSize: config.sandbox.warmPoolSize,
    onWarmPoolError: (error, skill) => options.onWarmPoolError?.(error, `${skill.name}@${skill.version}`),
  });
  const executor = new SkillExecutor({
    registry,
    runtimes: [containerRuntime],
    logger: options.logger ?? createConsoleLogger(),
    maxAttemptTimeoutMs: config.executor.maxAttemptTimeoutMs,
    ...(config.executor.approvalTimeoutMs === undefined
      ? {}
      : { approvalTimeoutMs: config.executor.approvalTimeoutMs }),
    ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }),
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
