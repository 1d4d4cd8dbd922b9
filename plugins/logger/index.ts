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
  /** Stream the lines go to (default `stderr`, so stdout stays free for program output). */
  destination?: "stderr" | "stdout";
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
      destination: z.enum(["stderr", "stdout"], { error: 'must be "stderr" or "stdout"' }).default("stderr"),
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
 *
 * Logging never fails an execution: serialisation and write errors are swallowed.
 */
export function createLoggerInterceptor(options: LoggerOptions = {}): Interceptor {
  const { destination, level, write } = parseInterceptorOptions("logger", optionsSchema, options);
  const threshold = LEVEL_RANK[level];
  const output = write ?? ((line: string) => process[destination].write(`${line}\n`));

  return defineInterceptor({
    name: "logger",
    order: -100,
    onFinish(_context, execution) {
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
        };
        output(JSON.stringify(line));
      } catch {
        // A closed pipe or a throwing sink must not turn a finished execution into a failed one.
      }
    },
  });
}

/** The plugin's entry point: the loader calls it with the manifest's `options`. */
export default createLoggerInterceptor;
