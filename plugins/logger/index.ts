import { performance } from "node:perf_hooks";
import {
  defineInterceptor,
  type ExecutionStatus,
  formatZodIssues,
  type Interceptor,
  type InterceptorContext,
  type LogLevel,
  SkillboxError,
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
  /** Handler attempts, `null` when the interceptor cannot know them (failures: see {@link createLoggerInterceptor}). */
  attempts: number | null;
}

const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

// The same mapping the executor uses to turn an error code into the recorded status.
const STATUS_BY_CODE: Record<string, ExecutionStatus> = {
  TIMEOUT: "timeout",
  CANCELLED: "cancelled",
  DENIED: "denied",
};

const LEVEL_BY_STATUS: Partial<Record<ExecutionStatus, Exclude<LogLevel, "silent">>> = {
  success: "info",
  denied: "warn",
  cancelled: "warn",
};

// Namespaced because `state` is shared by every interceptor of the execution.
const STARTED_AT = "@skillbox/plugin-logger:startedAt";

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

function parseOptions(options: unknown): z.output<typeof optionsSchema> {
  const parsed = optionsSchema.safeParse(options ?? {});
  if (!parsed.success) {
    throw new SkillboxError(
      "MANIFEST_INVALID",
      formatZodIssues(parsed.error, 'interceptor "logger" options'),
      {
        data: { interceptor: "logger", issues: parsed.error.issues },
      },
    );
  }
  return parsed.data;
}

function roundMilliseconds(milliseconds: number): number {
  return Math.round(milliseconds * 1000) / 1000;
}

/**
 * Creates the logger interceptor: one structured JSON line per execution, written from `after`
 * (success) or `onError` (failure). It runs early (`order` -100) so that, being outermost on the way
 * out, it sees the final output or error of the layers inside it — including denials by policy
 * interceptors with a higher order.
 *
 * Limits that follow from the interceptor contract: an execution that an inner interceptor's
 * `onError` recovers is not logged (outer `onError` hooks do not run after a recovery); `attempts`
 * is `null` on failures (`onError` is not told); and when output validation fails after `after`
 * hooks ran, the success line is followed by an error line for the same `executionId` — the last
 * line for an execution is its final state.
 *
 * Logging never fails an execution: serialisation and write errors are swallowed.
 */
export function createLoggerInterceptor(options: LoggerOptions = {}): Interceptor {
  const { destination, level, write } = parseOptions(options);
  const threshold = LEVEL_RANK[level];
  const output = write ?? ((line: string) => process[destination].write(`${line}\n`));

  function emit(
    context: InterceptorContext,
    fields: Pick<ExecutionLogLine, "status" | "code" | "durationMs" | "attempts">,
  ): void {
    const lineLevel = LEVEL_BY_STATUS[fields.status] ?? "error";
    if (LEVEL_RANK[lineLevel] < threshold) return;
    try {
      const line: ExecutionLogLine = {
        time: new Date().toISOString(),
        level: lineLevel,
        message: "skill execution",
        skill: context.skill.name,
        version: context.skill.version,
        executionId: context.executionId,
        parentExecutionId: context.parentExecutionId,
        apiKeyId: context.apiKeyId,
        sessionId: context.sessionId,
        ...fields,
      };
      output(JSON.stringify(line));
    } catch {
      // A closed pipe or a throwing sink must not turn a finished execution into a failed one.
    }
  }

  return defineInterceptor({
    name: "logger",
    order: -100,
    before(context) {
      context.state[STARTED_AT] = performance.now();
      return undefined;
    },
    after(context, result) {
      emit(context, {
        status: "success",
        code: null,
        durationMs: roundMilliseconds(result.duration),
        attempts: result.attempts,
      });
      return undefined;
    },
    onError(context, error) {
      const startedAt = context.state[STARTED_AT];
      emit(context, {
        status: STATUS_BY_CODE[error.code] ?? "error",
        code: error.code,
        durationMs: typeof startedAt === "number" ? roundMilliseconds(performance.now() - startedAt) : 0,
        attempts: null,
      });
      return undefined;
    },
  });
}

/** The plugin's entry point: the loader calls it with the manifest's `options`. */
export default createLoggerInterceptor;
