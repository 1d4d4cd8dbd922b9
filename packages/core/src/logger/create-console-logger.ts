import type { SkillLogger } from "../types.js";

/** Log levels from most to least verbose. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Options of {@link createConsoleLogger}. */
export interface ConsoleLoggerOptions {
  /** Lowest level written (default: `SKILLBOX_LOG_LEVEL`, else `warn`). */
  level?: LogLevel;
  /** Fields added to every line. */
  fields?: Record<string, unknown>;
  /** Where lines go (default: stderr, so stdout stays free for program output). */
  write?: (line: string) => void;
}

/** A logger writing one JSON object per line. */
export function createConsoleLogger(options: ConsoleLoggerOptions = {}): SkillLogger & {
  child(fields: Record<string, unknown>): SkillLogger;
} {
  const level = options.level ?? (process.env.SKILLBOX_LOG_LEVEL as LogLevel | undefined) ?? "warn";
  const threshold = RANK[level] ?? RANK.warn;
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const base = options.fields ?? {};
  const log =
    (lineLevel: Exclude<LogLevel, "silent">) => (message: string, fields?: Record<string, unknown>) => {
      if (RANK[lineLevel] < threshold) return;
      write(
        JSON.stringify({ time: new Date().toISOString(), level: lineLevel, message, ...base, ...fields }),
      );
    };
  return {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    child: (fields) => createConsoleLogger({ level, write, fields: { ...base, ...fields } }),
  };
}
