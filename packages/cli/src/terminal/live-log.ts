import type { LogLevel, SkillExecution, SkillLogger } from "@skillbox/core";
import type { FailedPackage, LoadedPackage } from "@skillbox/loader";
import type { Colors } from "./terminal.js";

/** The readable log of `skillbox dev`, `serve` and `mcp`: one timestamped line per event. */
export interface LiveLog {
  /** `HH:MM:SS.mmm <verb padded> <text>`. */
  line(verb: string, text: string): void;
  loaded(entry: LoadedPackage, verb?: "loaded" | "reloaded" | "removed"): void;
  failed(failure: FailedPackage): void;
  /** The `executed` line, unless the execution's own record (the logger plugin's) was logged already. */
  executed(execution: SkillExecution): void;
  /** A logger for `ctx.logger` that writes into this log (level: `SKILLBOX_LOG_LEVEL`, else info). */
  readonly logger: SkillLogger & { child(fields: Record<string, unknown>): SkillLogger };
}

const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
const VERB_WIDTH = 9;

/**
 * The message of an execution's own log record (the logger plugin's, with `destination: "log"`).
 * When one arrives for an execution, it is that execution's line in the log, and the `executed`
 * line the live log would print for it is left out: one line per execution either way.
 */
const EXECUTION_RECORD_MESSAGE = "skill execution";

/** Bounds the ids remembered between a record and its execution's end (a record that never ends one). */
const MAX_PENDING_RECORDS = 10_000;

function timestamp(): string {
  return new Date().toISOString().slice(11, 23);
}

/** Creates a live log writing lines with `write` (stdout for the servers, stderr for `mcp`). */
export function createLiveLog(write: (line: string) => void, colors: Colors): LiveLog {
  const paint: Record<string, (text: string) => string> = {
    loaded: colors.green,
    reloaded: colors.cyan,
    removed: colors.yellow,
    error: colors.red,
    failed: colors.red,
    listening: colors.bold,
  };
  const line = (verb: string, text: string) => {
    const painted = (paint[verb] ?? ((value: string) => value))(verb.padEnd(VERB_WIDTH));
    write(`${colors.dim(timestamp())} ${painted} ${text}`.trimEnd());
  };
  // Executions whose own record was logged: their `executed` line is not printed again.
  const recorded = new Set<string>();
  const configured = process.env.SKILLBOX_LOG_LEVEL as LogLevel | undefined;
  const threshold = LEVEL_RANK[configured ?? "info"] ?? LEVEL_RANK.info;
  const createLogger = (fields: Record<string, unknown>): LiveLog["logger"] => {
    const log =
      (level: Exclude<LogLevel, "silent">) => (message: string, extra?: Record<string, unknown>) => {
        if (LEVEL_RANK[level] < threshold) return;
        const { skill, executionId, attempt: _attempt, ...rest } = { ...fields, ...extra };
        if (message === EXECUTION_RECORD_MESSAGE && typeof executionId === "string") {
          if (recorded.size >= MAX_PENDING_RECORDS) recorded.clear();
          recorded.add(executionId);
          // The execution's one line: its id is what `skillbox executions <id>` takes.
          rest.executionId = executionId;
        }
        const details = Object.keys(rest).length === 0 ? "" : ` ${colors.dim(JSON.stringify(rest))}`;
        const levelText =
          level === "info" ? "" : `${level === "error" ? colors.red(level) : colors.yellow(level)} `;
        line("log", `${typeof skill === "string" ? `${skill} ` : ""}${levelText}${message}${details}`);
      };
    return {
      debug: log("debug"),
      info: log("info"),
      warn: log("warn"),
      error: log("error"),
      child: (childFields) => createLogger({ ...fields, ...childFields }),
    };
  };
  return {
    line,
    loaded: (entry, verb = "loaded") => line(verb, `${entry.kind} ${entry.name}@${entry.version ?? "-"}`),
    failed: (failure) => line("error", `${failure.code}: ${failure.message}`),
    executed(execution) {
      if (recorded.delete(execution.id)) return;
      const status =
        execution.status === "success" ? colors.green(execution.status) : colors.red(execution.status);
      const code = execution.error ? ` ${execution.error.code}: ${execution.error.message}` : "";
      const duration =
        execution.duration === null ? "" : colors.dim(` (${execution.duration.toFixed(1)} ms)`);
      line("executed", `${execution.skillName}@${execution.skillVersion} → ${status}${code}${duration}`);
    },
    logger: createLogger({}),
  };
}
