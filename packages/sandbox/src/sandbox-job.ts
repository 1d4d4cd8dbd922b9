import { trace } from "@opentelemetry/api";
import {
  type ProgressReport,
  type Skill,
  SkillboxError,
  type SkillContext,
  type SkillLogger,
} from "@skillbox/core";
import { ProgressThrottle } from "@skillbox/core/handler-module";
import {
  type RelayBoundary,
  type RelayedSpans,
  replayAtBoundary,
  reviveError,
  type SerializedError,
} from "@skillbox/core/internal";
import { missingImageError } from "./missing-image-error.js";
import { DEFAULT_MAX_OUTPUT_BYTES } from "./resolve-sandbox-config.js";
import type { SandboxConfig, SandboxResult } from "./sandbox-types.js";
import type { StartedSandbox } from "./started-sandbox.js";

/** How one skill's executions run in a sandbox, worked out once per skill version. */
export interface JobPlan {
  /** `command`: the skill's own command in an image; `handler`: Skillbox's runner loads its handler. */
  mode: "command" | "handler";
  image: string;
  command: string[];
  env: Record<string, string>;
  config: SandboxConfig;
}

interface ResultLine {
  ok: boolean;
  output?: unknown;
  error?: SerializedError;
  /** How many progress lines the runner printed on stderr before this line (absent: none). */
  progressReports?: number;
  /** The spans the handler ended, when the job was traced (bounded by the runner's relay). */
  spans?: RelayedSpans;
}

/** How much of stderr an error message quotes. */
const STDERR_TAIL_BYTES = 2_000;
/** podman and docker exit with 125 when the engine itself fails (no such image, bad flag). */
const ENGINE_FAILURE_EXIT_CODE = 125;

export function label(skill: Skill): string {
  return `${skill.name}@${skill.version}`;
}

function stderrTail(result: SandboxResult): string {
  const text = result.stderr.trim();
  return text.length > STDERR_TAIL_BYTES ? `…${text.slice(-STDERR_TAIL_BYTES)}` : text;
}

/** The error for a sandbox that ended without a usable answer. */
function failure(skill: Skill, result: SandboxResult, plan: JobPlan): SkillboxError {
  const { config } = plan;
  const stderr = stderrTail(result);
  const data = { exitCode: result.exitCode, stderr, sandboxId: result.id, provider: result.provider };
  if (result.oomKilled) {
    return new SkillboxError(
      "OUT_OF_MEMORY",
      `${label(skill)} ran out of memory in its sandbox (limit ${config.memoryMb ?? "none"} MiB); raise sandbox.memoryMb`,
      { data },
    );
  }
  if (result.killed) {
    return new SkillboxError("SANDBOX_FAILED", `${label(skill)}: its sandbox was killed`, { data });
  }
  if (result.exitCode === ENGINE_FAILURE_EXIT_CODE) {
    const missing = missingImageError({ skill, image: plan.image, provider: result.provider, stderr, data });
    if (missing !== undefined) return missing;
    return new SkillboxError(
      "SANDBOX_FAILED",
      `${label(skill)}: the ${result.provider} engine could not start the sandbox: ${stderr || "no message"}`,
      { data, retryable: false },
    );
  }
  return new SkillboxError(
    "HANDLER_ERROR",
    `${label(skill)} exited with code ${result.exitCode}${stderr ? `: ${stderr}` : " and no message on stderr"}`,
    { data },
  );
}

/** Forwards the sandbox's stderr to the execution's logger: JSON lines at their level, the rest as info. */
function forwardLogs(stderr: string, logger: SkillLogger): void {
  for (const line of stderr.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const { level, message, time: _time, ...fields } = JSON.parse(line) as Record<string, unknown>;
      if (
        typeof message === "string" &&
        (level === "debug" || level === "info" || level === "warn" || level === "error")
      ) {
        logger[level](message, fields);
        continue;
      }
    } catch {
      // Not a log entry: plain output.
    }
    logger.info(line, { stream: "stderr" });
  }
}

function outputTooLarge(skill: Skill): SkillboxError {
  return new SkillboxError(
    "OUTPUT_INVALID",
    `${label(skill)} printed more than the sandbox's output limit (1 MiB per stream); return a smaller output, ` +
      "and write logs to stderr rather than stdout",
  );
}

/** The output of a command skill: its stdout as JSON (empty stdout is `null`). */
function parseCommandOutput(skill: Skill, result: SandboxResult): unknown {
  if (result.truncated) throw outputTooLarge(skill);
  const text = result.stdout.trim();
  if (text === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new SkillboxError(
      "HANDLER_ERROR",
      `${label(skill)} printed something that is not JSON on stdout (${JSON.stringify(text.slice(0, 200))}); ` +
        "print only the output JSON on stdout and logs on stderr",
    );
  }
}

/** The runner's first line, printed once the handler module is loaded. */
const READY_LINE = '{"ready":true}';

/** Waits until the runner in `sandbox` has loaded the handler (handler skills only). */
export async function untilReady(sandbox: StartedSandbox, timeoutMs: number): Promise<StartedSandbox> {
  let timer: NodeJS.Timeout | undefined;
  const line = await Promise.race([
    sandbox.readLine(),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        void sandbox.kill();
        reject(
          new SkillboxError("SANDBOX_FAILED", `the sandbox did not load its handler within ${timeoutMs} ms`),
        );
      }, timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
  if (line !== READY_LINE && line !== undefined) {
    throw new SkillboxError(
      "SANDBOX_FAILED",
      `the sandbox runner printed ${JSON.stringify(line)} before its ready mark`,
    );
  }
  return sandbox;
}

/** The runner's result line, or `undefined` when the sandbox ended without one. */
async function resultLine(sandbox: StartedSandbox): Promise<ResultLine | undefined> {
  let line = await sandbox.readLine();
  if (line === READY_LINE) line = await sandbox.readLine();
  return line === undefined ? undefined : (JSON.parse(line) as ResultLine);
}

/**
 * The job's stdin: the input for a command, the input and context for the handler runner (and,
 * when traced, the `sandbox run` span the handler runs under).
 */
function jobInput(
  skill: Skill,
  plan: JobPlan,
  input: unknown,
  context: SkillContext,
  boundary: RelayBoundary | undefined,
): string {
  if (plan.mode === "command") return JSON.stringify(input ?? null);
  return JSON.stringify({
    input,
    ...(boundary === undefined
      ? {}
      : {
          trace: {
            traceparent: boundary.traceparent,
            tracestate: boundary.tracestate,
            // The runner leaves spans out of a result line that would not fit then.
            maxLineBytes: plan.config.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
          },
        }),
    context: {
      executionId: context.executionId,
      attempt: context.attempt,
      apiKeyId: context.apiKeyId,
      sessionId: context.sessionId,
      approval: context.approval ?? null,
      skill: { name: skill.name, version: skill.version },
    },
  });
}

/**
 * Hands the sandbox's progress lines (`\u001eskillbox:progress {json}` on stderr) to
 * `context.progress` while the attempt runs. Code in a sandbox may print them at any rate, past
 * the runner's own limit: the host thins them the same way (a burst, then the latest per 50 ms).
 * Close the returned throttle when the attempt settles: it sends the report still waiting.
 */
function forwardProgress(sandbox: StartedSandbox, context: SkillContext): ProgressThrottle {
  const throttle = new ProgressThrottle((report) => {
    if (!context.signal.aborted) context.progress(report as ProgressReport);
  });
  let warned = false;
  sandbox.onControlLine = (kind, payload) => {
    if (kind !== "progress") return;
    let report: unknown;
    try {
      report = JSON.parse(payload);
    } catch {
      if (!warned) {
        warned = true;
        context.logger.warn("the sandbox printed a progress line that is not JSON; it was dropped", {
          line: payload.slice(0, 200),
        });
      }
      return;
    }
    throttle.report(report);
  };
  return throttle;
}

/**
 * Gives one execution's job to a started sandbox and turns what comes back into the output or
 * the error. A handler sandbox answers with a line, so the execution ends before the engine has
 * torn the sandbox down; a command's answer is its stdout once it exited. With a `boundary` (the
 * `sandbox run` span), the handler runs under it and the spans it ended are replayed there.
 */
export async function runSandboxJob(
  skill: Skill,
  plan: JobPlan,
  sandbox: StartedSandbox,
  input: unknown,
  context: SkillContext,
  boundary?: RelayBoundary,
): Promise<unknown> {
  const line = plan.mode === "handler" ? resultLine(sandbox) : undefined;
  const progress = forwardProgress(sandbox, context);
  try {
    sandbox.send(jobInput(skill, plan, input, context, boundary), context.signal);
    sandbox.result.then(
      (result) => forwardLogs(result.stderr, context.logger),
      () => {},
    );
    const answer = await line;
    if (answer !== undefined) {
      // Printed before the answer, on stderr: they may still be on their way.
      if (answer.progressReports !== undefined) await sandbox.untilControlLines(answer.progressReports);
      if (boundary !== undefined) {
        replayAtBoundary(trace.getTracer("@skillbox/sandbox"), boundary, answer.spans);
      }
      if (answer.ok) return answer.output;
      throw reviveError(answer.error ?? { message: "the sandbox runner reported no error" });
    }
    return answerOf(skill, plan, await sandbox.result);
  } finally {
    // Sends the report still waiting, before the attempt settles; later lines are dropped.
    progress.close();
    sandbox.onControlLine = undefined;
  }
}

/** The outcome of a sandbox that ended without a result line (a command, or a runner that died). */
function answerOf(skill: Skill, plan: JobPlan, result: SandboxResult): unknown {
  if (result.truncated && result.exitCode === 0 && !result.killed) throw outputTooLarge(skill);
  if (result.exitCode !== 0 || result.killed || plan.mode === "handler") throw failure(skill, result, plan);
  return parseCommandOutput(skill, result);
}
