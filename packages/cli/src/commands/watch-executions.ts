import type { ExecutionStatus, ExecutionStreamEvent, ExecutionSummary, SkillExecutor } from "@skillbox/core";
import type { ResolvedConfig } from "../config/load-config.js";
import type { CliHost } from "../host/open-cli-host.js";
import { listenForShutdown } from "../server/listen-for-shutdown.js";
import { formatProgress } from "../terminal/format-progress.js";
import { type CommandContext, withHost } from "./command-context.js";

/** The filters `skillbox executions --watch` shares with the listing. */
export interface WatchListOptions {
  skill?: string;
  status?: ExecutionStatus[];
  owner?: string;
  limit: number;
  json?: boolean;
}

/** Redraws are coalesced: a burst of events (a queue draining) redraws once per this many ms. */
const REDRAW_INTERVAL_MS = 100;

/**
 * The view also redraws this often without an event: a plain `execute()` in another process (a
 * synchronous HTTP call, `skillbox run`) writes its row but no event, so only a fresh read shows it.
 */
const REFRESH_INTERVAL_MS = 1000;

/**
 * Prints each change once: a `finished` event repeats the final `status` event before it, when
 * the stream sent one.
 */
function changePrinter(
  print: (line: string) => void,
  json: boolean,
): {
  labels: Map<string, string>;
  statuses: Map<string, ExecutionStatus>;
  print(event: ExecutionStreamEvent): void;
} {
  const labels = new Map<string, string>();
  const statuses = new Map<string, ExecutionStatus>();
  return {
    labels,
    statuses,
    print(event) {
      if (event.type === "finished" && statuses.get(event.executionId) === event.execution.status) return;
      if (event.type !== "progress") statuses.set(event.executionId, event.execution.status);
      print(json ? JSON.stringify(event) : eventLine(event, labels));
    },
  };
}

/** `HH:MM:SS.mmm id skill@version status [CODE]` or `… progress <bar>`: one line per change. */
function eventLine(event: ExecutionStreamEvent, labels: Map<string, string>): string {
  const time = new Date().toISOString().slice(11, 23);
  if (event.type === "progress") {
    const label = labels.get(event.executionId) ?? "-";
    return `${time}  ${event.executionId}  ${label}  progress ${formatProgress(event.progress)}`;
  }
  const { execution } = event;
  const label = `${execution.skillName}@${execution.skillVersion}`;
  labels.set(execution.id, label);
  const error = execution.error === null ? "" : ` ${execution.error.code}`;
  return `${time}  ${execution.id}  ${label}  ${execution.status}${error}`;
}

/**
 * Runs `watch` with a host and a signal that Ctrl-C / SIGTERM aborts: core's event stream keeps
 * the process alive until then.
 */
async function watchWithHost(
  config: ResolvedConfig,
  watch: (host: CliHost, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const controller = new AbortController();
  const shutdown = listenForShutdown();
  void shutdown.requested.then(() => controller.abort());
  try {
    await withHost(config, (host) => watch(host, controller.signal));
  } finally {
    shutdown.dispose();
  }
}

/**
 * Runs `consume` over the stream until it ends or the signal aborts (an abort is no error here),
 * one event at a time: an event whose handling reads the audit trail is printed before the next.
 * `onSubscribed` runs once the first read is under way: a stream that subscribes on its first
 * read has subscribed by then.
 */
async function drain(
  stream: AsyncIterableIterator<ExecutionStreamEvent>,
  signal: AbortSignal,
  consume: (event: ExecutionStreamEvent) => void | Promise<void>,
  onSubscribed: () => void = () => {},
): Promise<void> {
  try {
    let next = stream.next();
    onSubscribed();
    for (let result = await next; result.done !== true; result = await next) {
      await consume(result.value);
      next = stream.next();
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}

/**
 * `skillbox executions --watch`: on a terminal, the listing redrawn whenever an execution
 * changes (status or progress) and every second; elsewhere one line per change (`--json`: one
 * event per line), so a log or a pipe gets only what happened — of the executions that have
 * events: submitted ones, those that waited for approval, and progress reports (a plain
 * `execute()` in another process writes no status events). Runs until Ctrl-C. Its host runs no queued work.
 */
export async function watchExecutionList(
  context: CommandContext,
  config: ResolvedConfig,
  options: WatchListOptions,
  renderTable: (executions: ExecutionSummary[]) => string[],
): Promise<void> {
  const { terminal } = context;
  await watchWithHost(config, async (host, signal) => {
    const stream = host.executor.watchExecutions({
      signal,
      ...(options.skill === undefined ? {} : { skill: options.skill }),
      ...(options.owner === undefined ? {} : { apiKeyId: options.owner }),
    });
    if (terminal.interactive && !options.json) {
      const view = await redrawer(host.executor, options, terminal, renderTable);
      try {
        await drain(stream, signal, view.update);
      } finally {
        await view.stop();
      }
      return;
    }
    const changes = changePrinter(terminal.print, options.json === true);
    const wanted = (event: ExecutionStreamEvent) => {
      if (options.status === undefined) return true;
      const status =
        event.type === "progress" ? changes.statuses.get(event.executionId) : event.execution.status;
      return status !== undefined && options.status.includes(status);
    };
    await drain(
      stream,
      signal,
      async (event) => {
        if (event.type === "progress" && !changes.labels.has(event.executionId)) {
          // Started before this watch: its first progress report names it once.
          const execution = await host.executor.getExecution(event.executionId);
          if (execution !== undefined) {
            changes.labels.set(execution.id, `${execution.skillName}@${execution.skillVersion}`);
            changes.statuses.set(execution.id, execution.status);
          }
        }
        if (wanted(event)) changes.print(event);
      },
      () => terminal.printDiagnostic("watching executions: one line per change; Ctrl-C stops"),
    );
  });
}

/**
 * Draws the listing now (a failing first read fails the command) and again every
 * {@link REFRESH_INTERVAL_MS} and after each event (at most every {@link REDRAW_INTERVAL_MS}).
 * One read at a time: a redraw asked for while one is under way runs once it is done, so an older
 * listing never replaces a newer one. A later read that fails is reported and the view goes on.
 */
async function redrawer(
  executor: SkillExecutor,
  options: WatchListOptions,
  terminal: CommandContext["terminal"],
  renderTable: (executions: ExecutionSummary[]) => string[],
): Promise<{ update(): void; stop(): Promise<void> }> {
  let stopped = false;
  const render = async () => {
    const executions = await executor.listExecutionSummaries({
      skill: options.skill,
      status: options.status,
      owner: options.owner,
      limit: options.limit,
      previewLength: 0,
    });
    if (stopped) return;
    const header = terminal.colors.dim(`watching executions (${new Date().toISOString()}); Ctrl-C stops`);
    terminal.redraw([
      header,
      "",
      ...(executions.length === 0 ? ["no executions recorded"] : renderTable(executions)),
    ]);
  };
  await render();
  let drawing: Promise<void> | undefined;
  let again = false;
  const draw = () => {
    if (stopped) return;
    if (drawing !== undefined) {
      again = true;
      return;
    }
    drawing = render()
      .catch((error: unknown) => {
        if (!stopped) terminal.fail(error);
      })
      .finally(() => {
        drawing = undefined;
        if (again) {
          again = false;
          draw();
        }
      });
  };
  let scheduled: NodeJS.Timeout | undefined;
  const refresh = setInterval(draw, REFRESH_INTERVAL_MS);
  return {
    update() {
      scheduled ??= setTimeout(() => {
        scheduled = undefined;
        draw();
      }, REDRAW_INTERVAL_MS);
    },
    // Waits for a read under way: the host closes after this.
    stop: async () => {
      stopped = true;
      clearTimeout(scheduled);
      clearInterval(refresh);
      await drawing;
    },
  };
}

/**
 * `skillbox executions <id> --watch`: one line per change of that execution until it ends
 * (`--json`: one event per line); Ctrl-C stops early.
 */
export async function watchOneExecution(
  context: CommandContext,
  config: ResolvedConfig,
  id: string,
  options: { json?: boolean },
): Promise<void> {
  await watchWithHost(config, async (host, signal) => {
    const changes = changePrinter(context.terminal.print, options.json === true);
    const current = await host.executor.getExecution(id);
    if (current !== undefined) changes.labels.set(id, `${current.skillName}@${current.skillVersion}`);
    await drain(host.executor.events(id, { signal }), signal, changes.print);
  });
}
