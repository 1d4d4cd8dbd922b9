import {
  defineInterceptor,
  type ExecutionStatus,
  type Interceptor,
  type LogLevel,
  parseInterceptorOptions,
} from "@skillbox/core";
import { z } from "zod";

/** Options of the logger interceptor (the `options` block of `interceptor.json`). */
export interface LoggerOptions {
  /**
   * Where the lines go: `stderr` (the default, so stdout stays free for program output) or
   * `stdout` get the JSON lines written as they are; `log` hands each line to the host's log
   * (`ctx.logger`) as an `info` record named `skill execution`, so the host decides where it
   * goes — `skillbox dev`/`serve` put it in their log (as the one line of that execution), and
   * `skillbox run`/`test`, which print each execution's outcome themselves, leave it out (unless
   * `SKILLBOX_LOG_LEVEL` is `info` or `debug`).
   */
  destination?: "stderr" | "stdout" | "log";
  /** Lowest level written (default `info`: every execution). Successes are `info`, denials and cancellations `warn`, failures `error`. */
  level?: LogLevel;
  /** Receives each line (without a trailing newline) instead of `destination`; meant for tests and embedding. */
  write?: (line: string) => void;
}

/** The JSON object written for one execution. */
export interface ExecutionLogLine {
  time: string;
  level: Exclude<LogLevel, "silent">;
  message: "skill execution";
  skill: string;
  version: string;
  executionId: string;
  parentExecutionId: string | null;
  apiKeyId: string;
  sessionId: string | null;
  status: ExecutionStatus;
  /** The error code, `null` on success. */
  code: string | null;
  durationMs: number;
  /** Handler attempts (0 when the handler never ran: invalid input, denial). */
  attempts: number;
  /**
   * The trace the execution's span belongs to (32 hex digits), so a log backend links the line to
   * the trace; only when an OpenTelemetry SDK recorded the execution.
   */
  trace_id?: string;
  /** The execution's own span (16 hex digits); with `trace_id`. */
  span_id?: string;
}

const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

const LEVEL_BY_STATUS: Partial<Record<ExecutionStatus, Exclude<LogLevel, "silent">>> = {
  success: "info",
  denied: "warn",
  cancelled: "warn",
};

const optionsSchema = z
  .object(
    {
      destination: z
        .enum(["stderr", "stdout", "log"], { error: 'must be "stderr", "stdout" or "log"' })
        .default("stderr"),
      level: z
        .enum(["debug", "info", "warn", "error", "silent"], {
          error: 'must be one of "debug", "info", "warn", "error", "silent"',
        })
        .default("info"),
      write: z
        .custom<(line: string) => void>((value) => typeof value === "function", {
          error: "must be a function",
        })
        .optional(),
    },
    { error: "must be an object" },
  )
  .strict();

function roundMilliseconds(milliseconds: number): number {
  return Math.round(milliseconds * 1000) / 1000;
}

/**
 * Creates the logger interceptor: one structured JSON line per execution, written from `onFinish`
 * once the final state is known — after retries, every other interceptor and the output check —
 * so the line always tells what `execute()` returned (recoveries and late failures included).
 * When an OpenTelemetry SDK traced the execution, the line carries its `trace_id` and `span_id`.
 *
 * Logging never fails an execution: serialisation and write errors are swallowed.
 */
export function createLoggerInterceptor(options: LoggerOptions = {}): Interceptor {
  const { destination, level, write } = parseInterceptorOptions("logger", optionsSchema, options);
  const threshold = LEVEL_RANK[level];
  const output =
    write ?? (destination === "log" ? undefined : (line: string) => process[destination].write(`${line}\n`));

  return defineInterceptor({
    name: "logger",
    order: -100,
    onFinish(context, execution) {
      const lineLevel = LEVEL_BY_STATUS[execution.status] ?? "error";
      if (LEVEL_RANK[lineLevel] < threshold) return;
      try {
        const line: ExecutionLogLine = {
          time: new Date().toISOString(),
          level: lineLevel,
          message: "skill execution",
          skill: execution.skillName,
          version: execution.skillVersion,
          executionId: execution.id,
          parentExecutionId: execution.parentExecutionId,
          apiKeyId: execution.apiKeyId,
          sessionId: execution.sessionId,
          status: execution.status,
          code: execution.error?.code ?? null,
          durationMs: roundMilliseconds(execution.duration ?? 0),
          attempts: execution.attempts,
          // The record's ids rather than the active span's: the line is written after the
          // execution's span ended, and the plugin stays free of an OpenTelemetry dependency.
          ...(execution.traceId === null || execution.spanId === null
            ? {}
            : { trace_id: execution.traceId, span_id: execution.spanId }),
        };
        if (output !== undefined) {
          output(JSON.stringify(line));
        } else {
          // The host's logger adds the time, the level and the message itself. The record is
          // `info` whatever the outcome: it is the execution's log entry, and its status and code
          // say how it ended (the failure itself is the caller's to report).
          const { time: _time, level: _level, message, ...fields } = line;
          context.logger.info(message, { ...fields, severity: lineLevel });
        }
      } catch {
        // A closed pipe or a throwing sink must not turn a finished execution into a failed one.
      }
    },
  });
}

/** The plugin's entry point: the loader calls it with the manifest's `options`. */
export default createLoggerInterceptor;
