import { SkillboxError } from "../errors/skillbox-error.js";
import type { ExecuteOptions, Skill } from "../types.js";

/** Where an attempt's timeout came from, as its TIMEOUT message names it. */
export interface AttemptTimeout {
  milliseconds: number;
  source: string;
}

/** The executor's timeout options (see `SkillExecutorOptions`). */
export interface ExecutionTimeoutOptions {
  defaultTimeoutMs?: number;
  defaultTotalTimeoutMs?: number;
  maxAttemptTimeoutMs?: number;
}

/**
 * The timeouts an execution runs under: the per-attempt timeout and the overall deadline, from
 * the skill, the executor's defaults and the operator's ceiling. A caller may only shorten them,
 * so nobody can pin the host longer than the skill and the operator allow.
 */
export class ExecutionTimeouts {
  /** The overall deadline across attempts when a call sets none (undefined: none beyond the attempts). */
  readonly defaultTotalTimeoutMs: number | undefined;
  private readonly defaultTimeoutMs: number;
  private readonly maxAttemptTimeoutMs: number | undefined;

  /** Throws `CONFIG_INVALID`, naming the option, for a value that is not a positive number. */
  constructor(options: ExecutionTimeoutOptions) {
    this.defaultTimeoutMs = checkedMilliseconds("defaultTimeoutMs", options.defaultTimeoutMs) ?? 30_000;
    this.defaultTotalTimeoutMs = checkedMilliseconds("defaultTotalTimeoutMs", options.defaultTotalTimeoutMs);
    this.maxAttemptTimeoutMs = checkedMilliseconds("maxAttemptTimeoutMs", options.maxAttemptTimeoutMs);
  }

  /** The per-attempt timeout: the skill's own (else the default), within the ceiling, lowered by the call's. */
  attemptTimeout(skill: Skill, options: Pick<ExecuteOptions, "timeoutMs">): AttemptTimeout {
    let timeout: AttemptTimeout =
      skill.timeoutMs === undefined
        ? { milliseconds: this.defaultTimeoutMs, source: "the executor's defaultTimeoutMs" }
        : { milliseconds: skill.timeoutMs, source: "the skill's timeoutMs" };
    if (this.maxAttemptTimeoutMs !== undefined && this.maxAttemptTimeoutMs < timeout.milliseconds) {
      timeout = { milliseconds: this.maxAttemptTimeoutMs, source: "the host's maxAttemptTimeoutMs" };
    }
    // `<` is false for NaN, so a malformed value never replaces the limit.
    if (typeof options.timeoutMs === "number" && options.timeoutMs < timeout.milliseconds) {
      timeout = { milliseconds: options.timeoutMs, source: "the call's timeoutMs" };
    }
    return timeout;
  }

  /** The overall deadline: the executor's default, which a caller may only shorten (or set, without one). */
  totalTimeout(options: Pick<ExecuteOptions, "totalTimeoutMs">): number | undefined {
    const requested = options.totalTimeoutMs;
    if (typeof requested !== "number" || Number.isNaN(requested)) return this.defaultTotalTimeoutMs;
    return this.defaultTotalTimeoutMs === undefined
      ? requested
      : Math.min(requested, this.defaultTotalTimeoutMs);
  }
}

/**
 * A millisecond option of the executor: undefined, or a positive number (0 too with `allowZero`);
 * anything else is `CONFIG_INVALID` naming the option.
 */
export function checkedMilliseconds(
  name: string,
  value: number | undefined,
  allowZero = false,
): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || Number.isNaN(value) || value < 0 || (value === 0 && !allowZero)) {
    throw new SkillboxError(
      "CONFIG_INVALID",
      `SkillExecutor: \`${name}\` must be ${allowZero ? "0 or a positive" : "a positive"} number of milliseconds, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}
