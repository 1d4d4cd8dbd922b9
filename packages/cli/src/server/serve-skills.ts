import { type LoadReport, loadSkills, type SkillLoader, watchSkills } from "@skillbox/loader";
import { displayPath } from "@skillbox/loader/internal";
import type { ResolvedConfig } from "../config/load-config.js";
import { loaderOptionsOf, loadingMessage } from "../host/load-skill-folders.js";
import { type CliHost, openCliHost } from "../host/open-cli-host.js";
import { warmSandboxes } from "../host/warm-sandboxes.js";
import { resolveTelemetrySettings } from "../telemetry/resolve-telemetry-settings.js";
import { errorCodeOf } from "../terminal/format-error-line.js";
import { createLiveLog, type LiveLog } from "../terminal/live-log.js";
import type { Terminal } from "../terminal/terminal.js";
import { listenForShutdown } from "./listen-for-shutdown.js";
import { loaderActivitySource } from "./loader-activity-source.js";
import type { ServerAddress } from "./resolve-server-settings.js";
import { startApiServer } from "./start-api-server.js";

/** Options of {@link serveSkills}. */
export interface ServeSkillsOptions {
  /** Watch the folders and hot-reload (`dev`), or load once (`serve`). */
  watch: boolean;
  address: ServerAddress;
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
 * `skillbox dev` and `skillbox serve`: loads the folders (watching them for `dev`), serves the
 * HTTP API with MCP at `/mcp`, an A2A agent and Skillbox Studio at `/` (unless `config.studio`
 * is false; the log prints its URL), logs loads, reloads, errors and executions readably on stdout,
 * and on Ctrl-C or SIGTERM stops taking requests, gives running executions the shutdown grace
 * period (`executor.shutdownGraceMs`, then cancels them), and closes the server, the watcher, the
 * host's close handlers (browsers and other pools skills opened), the sandboxes and the database
 * in that order. With a `telemetry` block or `OTEL_*` export variables it first starts the
 * OpenTelemetry SDK (see `resolveTelemetrySettings`), and flushes and stops it last. Resolves
 * once everything is closed.
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
    const host = openCliHost(config, {
      logger: log.logger,
      ...(telemetrySettings === undefined
        ? {}
        : {
            telemetry: {
              recordInputs: telemetrySettings.recordInputs,
              recordOutputs: telemetrySettings.recordOutputs,
            },
          }),
    });
    // At once: the background queue may run what was queued (`run --async`, approvals) while
    // the folders still load.
    host.executor.on("finished", (execution) => log.executed(execution));
    const grace = { graceMs: config.executor.shutdownGraceMs };
    cleanups.push({ name: "host", run: () => host.close(grace) });
    log.line("database", displayPath(config.database));
    const folders = await loadFolders(host, config, options, terminal, log);
    cleanups.push({ name: options.watch ? "watcher" : "loader", run: () => folders.close() });
    for (const entry of folders.report.loaded) log.loaded(entry);
    for (const warning of folders.report.warnings) terminal.warn(warning.code, warning.message);
    for (const failure of folders.report.failed) log.failed(failure);
    const activity = loaderActivitySource(folders.loader, { owner: config.owner, firstLoad: folders.report });
    const skillIds = folders.report.loaded.flatMap((entry) =>
      entry.skillId === undefined ? [] : [entry.skillId],
    );
    await warmSandboxes(host, skillIds, config.sandbox.warmPoolSize, terminal, log);
    const server = await startApiServer(host, config, options.address, { activity: activity.feed });
    // The first load and whatever changed since, for the API's views of each package (its
    // source, its last load error), then live.
    activity.open();
    cleanups.push({
      name: "server",
      // Requests in flight wait for their executions: those get the grace period, then are cancelled.
      run: () => server.close(() => host.executor.close(grace)),
    });
    const folderList = folders.loader.dirs.map(displayPath).join(", ");
    log.line(
      "serving",
      `${host.registry.list(config.owner).length} skill version(s) from ${folderList}` +
        (options.watch ? "; edits reload live" : ""),
    );
    if (!server.apiKeysConfigured)
      log.line("auth", "no API keys configured: every request is the public caller");
    log.line(
      "listening",
      `${server.url} (MCP at ${server.url}/mcp, A2A agent card at ${server.url}/.well-known/agent-card.json); Ctrl-C stops`,
    );
    if (server.studioUrl !== undefined) log.line("open", `Studio: ${server.studioUrl}`);
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
