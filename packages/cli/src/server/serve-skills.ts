import { isPostgresUrl, redactedUrl } from "@skillbox/core";
import type { DistributedRole } from "@skillbox/distributed";
import { type LoadReport, loadSkills, type SkillLoader, watchSkills } from "@skillbox/loader";
import { displayPath } from "@skillbox/loader/internal";
import type { ResolvedConfig } from "../config/load-config.js";
import { loaderOptionsOf, loadingMessage } from "../host/load-skill-folders.js";
import {
  type CliHost,
  type CliHostOptions,
  openCliHost,
  openConfiguredHost,
  usesDeployment,
} from "../host/open-cli-host.js";
import { warmSandboxes } from "../host/warm-sandboxes.js";
import { resolveTelemetrySettings } from "../telemetry/resolve-telemetry-settings.js";
import { errorCodeOf } from "../terminal/format-error-line.js";
import { createLiveLog, type LiveLog } from "../terminal/live-log.js";
import type { Terminal } from "../terminal/terminal.js";
import { listenForShutdown } from "./listen-for-shutdown.js";
import { loaderActivitySource } from "./loader-activity-source.js";
import type { ServerAddress } from "./resolve-server-settings.js";
import { startApiServer } from "./start-api-server.js";
import { startQueueWorker, workerJobLogger } from "./start-queue-worker.js";

/** Options of {@link serveSkills}. */
export interface ServeSkillsOptions {
  /** Watch the folders and hot-reload (`dev`), or load once (`serve`). */
  watch: boolean;
  /** Where the API listens; undefined for a worker (`skillbox worker`, `serve --role worker`). */
  address: ServerAddress | undefined;
  /**
   * With a queue configured: `api` serves requests only, `worker` runs executions from the queue
   * only, `both` does both (the default). Undefined on a single host.
   */
  role?: DistributedRole;
}

/** The loaded skills and how to stop serving them. */
interface LoadedFolders {
  report: LoadReport;
  loader: SkillLoader;
  close(): Promise<void>;
}

async function loadFolders(
  host: CliHost,
  config: ResolvedConfig,
  options: ServeSkillsOptions,
  terminal: Terminal,
  log: LiveLog,
): Promise<LoadedFolders> {
  const loaderOptions = loaderOptionsOf(host, config);
  const progress = terminal.progress(loadingMessage(config));
  try {
    if (!options.watch) {
      const { loader, ...report } = await loadSkills(loaderOptions);
      return { report, loader, close: async () => loader.close() };
    }
    const watcher = watchSkills(loaderOptions);
    // The first load's failures come with the ready report; events after it are live edits.
    let ready = false;
    watcher.on("loaded", (entry) => ready && log.loaded(entry));
    watcher.on("reloaded", (entry) => log.loaded(entry, "reloaded"));
    watcher.on("removed", (entry) => log.loaded(entry, "removed"));
    watcher.on("error", (failure) => ready && log.failed(failure));
    watcher.on("warning", (warning) => ready && terminal.warn(warning.code, warning.message));
    try {
      const report = await watcher.ready();
      ready = true;
      return { report, loader: watcher.loader, close: () => watcher.close() };
    } catch (error) {
      await watcher.close();
      throw error;
    }
  } finally {
    progress.stop();
  }
}

/**
 * Serves the HTTP API (MCP, A2A, the Studio) over `host`, prints where, and returns how to stop
 * it: requests in flight wait for their executions, which get the grace period, then are cancelled.
 */
async function serveApi(
  host: CliHost,
  config: ResolvedConfig,
  options: ServeSkillsOptions & { address: ServerAddress; folderList: string },
  folders: LoadedFolders,
  log: LiveLog,
): Promise<{ name: string; run: () => Promise<void> }> {
  const activity = loaderActivitySource(folders.loader, { owner: config.owner, firstLoad: folders.report });
  const server = await startApiServer(host, config, options.address, { activity: activity.feed });
  // The first load and whatever changed since, for the API's views of each package (its
  // source, its last load error), then live.
  activity.open();
  log.line(
    "serving",
    `${host.registry.list(config.owner).length} skill version(s) from ${options.folderList}` +
      (options.watch ? "; edits reload live" : ""),
  );
  if (!server.apiKeysConfigured)
    log.line("auth", "no API keys configured: every request is the public caller");
  log.line(
    "listening",
    `${server.url} (MCP at ${server.url}/mcp, A2A agent card at ${server.url}/.well-known/agent-card.json); Ctrl-C stops`,
  );
  if (server.studioUrl !== undefined) log.line("open", `Studio: ${server.studioUrl}`);
  const grace = { graceMs: config.executor.shutdownGraceMs };
  return { name: "server", run: () => server.close(() => host.executor.close(grace)) };
}

/**
 * `skillbox dev` and `skillbox serve`: loads the folders (watching them for `dev`), serves the
 * HTTP API with MCP at `/mcp`, an A2A agent and Skillbox Studio at `/` (unless `config.studio`
 * is false; the log prints its URL), logs loads, reloads, errors and executions readably on stdout,
 * and on Ctrl-C or SIGTERM stops taking requests, gives running executions the shutdown grace
 * period (`executor.shutdownGraceMs`, then cancels them), and closes the server, the watcher, the
 * host's close handlers (browsers and other pools skills opened), the sandboxes and the database
 * in that order. With a `telemetry` block or `OTEL_*` export variables it first starts the
 * OpenTelemetry SDK (see `resolveTelemetrySettings`), and flushes and stops it last. Resolves
 * once everything is closed.
 *
 * With a queue (`role`), the host is one of a distributed deployment: an `api` host serves but
 * runs nothing; a `worker` serves nothing and takes executions from the queue once its skills
 * are loaded (printing `worker <id> ready: …`), and on shutdown stops taking jobs first, then
 * gives its runs the grace period. An evicting Redis is refused (`QUEUE_EVICTING`).
 */
export async function serveSkills(
  config: ResolvedConfig,
  options: ServeSkillsOptions,
  terminal: Terminal,
): Promise<void> {
  const log = createLiveLog(terminal.print, terminal.colors);
  const shutdown = listenForShutdown();
  const cleanups: { name: string; run: () => Promise<void> }[] = [];
  try {
    const telemetrySettings = resolveTelemetrySettings(config.telemetry);
    if (telemetrySettings !== undefined) {
      // Before the host: instruments made before a meter provider is registered stay no-ops.
      // Loaded on demand, so a server that exports nothing never loads the SDK.
      const { startTelemetry } = await import("../telemetry/start-telemetry.js");
      const telemetry = await startTelemetry(telemetrySettings, {
        onExportError: (message) =>
          log.line(
            "telemetry",
            `export failed: ${message} (check the collector and OTEL_EXPORTER_OTLP_ENDPOINT; later failures are not logged, OTEL_LOG_LEVEL=error logs each)`,
          ),
      });
      // First in, so last out: the host's last executions end before their spans are flushed.
      cleanups.push({ name: "telemetry", run: () => telemetry.shutdown() });
      log.line("telemetry", telemetry.summary);
    }
    const role = config.queue === undefined ? undefined : (options.role ?? "both");
    const runsWork = role !== "api";
    const onJob = role === undefined || role === "api" ? undefined : workerJobLogger(() => host, log);
    const hostOptions: CliHostOptions = {
      logger: log.logger,
      ...(role === undefined ? {} : { role }),
      ...(onJob === undefined ? {} : { onJob }),
      ...(telemetrySettings === undefined
        ? {}
        : {
            telemetry: {
              recordInputs: telemetrySettings.recordInputs,
              recordOutputs: telemetrySettings.recordOutputs,
            },
          }),
    };
    // A single host synchronously: its queue and the folders' load start in the same turn.
    const host = usesDeployment(config)
      ? await openConfiguredHost(config, hostOptions)
      : openCliHost(config, hostOptions);
    // At once: the background queue may run what was queued (`run --async`, approvals) while
    // the folders still load.
    host.executor.on("finished", (execution) => log.executed(execution));
    const grace = { graceMs: config.executor.shutdownGraceMs };
    cleanups.push({ name: "host", run: () => host.close(grace) });
    log.line(
      "database",
      isPostgresUrl(config.database) ? redactedUrl(config.database) : displayPath(config.database),
    );
    if (config.queue !== undefined) {
      log.line(
        "queue",
        `${redactedUrl(config.queue)} (prefix ${config.queuePrefix ?? "skillbox"}); role ${role}`,
      );
    }
    const folders = await loadFolders(host, config, options, terminal, log);
    cleanups.push({ name: options.watch ? "watcher" : "loader", run: () => folders.close() });
    for (const entry of folders.report.loaded) log.loaded(entry);
    for (const warning of folders.report.warnings) terminal.warn(warning.code, warning.message);
    for (const failure of folders.report.failed) log.failed(failure);
    const skillIds = folders.report.loaded.flatMap((entry) =>
      entry.skillId === undefined ? [] : [entry.skillId],
    );
    if (runsWork) await warmSandboxes(host, skillIds, config.sandbox.warmPoolSize, terminal, log);
    const folderList = folders.loader.dirs.map(displayPath).join(", ");
    if (role !== "worker" && options.address !== undefined) {
      const address = options.address;
      cleanups.push(await serveApi(host, config, { ...options, address, folderList }, folders, log));
    }
    // Pushed last, so stopped first: no job is taken once shutdown starts, and runs get the grace.
    if (role !== undefined && runsWork) {
      const alone = role === "worker";
      cleanups.push(await startQueueWorker(host, config, log, { folderList, watch: options.watch, alone }));
    }
    const reason = await shutdown.requested;
    log.line("stopping", reason);
  } finally {
    // Reverse order: stop taking requests, then stop loading, then wait for executions and close.
    for (const cleanup of cleanups.reverse()) {
      await cleanup.run().catch((error: unknown) => {
        log.line(
          "error",
          `closing the ${cleanup.name} failed: ${errorCodeOf(error)}: ${(error as Error).message}`,
        );
      });
    }
    shutdown.dispose();
  }
  log.line("stopped", "");
}
