import type { InterceptorContext } from "../interceptors/define-interceptor.js";
import type { Skill, SkillLogger } from "../types.js";

/** Creates loggers for executions (implemented by the executor). */
export interface ExecutionLoggerFactory {
  createLogger(fields: Record<string, unknown>): SkillLogger;
}

/**
 * Everything known about one execution while it runs. It is the `context` interceptors see;
 * `state` and `logger` are created on first use, since most executions never touch them.
 */
export class ExecutionState implements InterceptorContext {
  private cachedState: Record<string, unknown> | undefined;
  private cachedLogger: SkillLogger | undefined;

  constructor(
    private readonly loggers: ExecutionLoggerFactory,
    readonly skill: Skill,
    public input: unknown,
    readonly executionId: string,
    readonly parentExecutionId: string | null,
    readonly apiKeyId: string,
    readonly sessionId: string | null,
    /** 0 for a top-level execution, parent's depth + 1 for `ctx.call`. */
    readonly depth: number,
  ) {}

  get state(): Record<string, unknown> {
    this.cachedState ??= {};
    return this.cachedState;
  }

  get logger(): SkillLogger {
    this.cachedLogger ??= this.loggers.createLogger({
      skill: `${this.skill.name}@${this.skill.version}`,
      executionId: this.executionId,
    });
    return this.cachedLogger;
  }
}
