import type { Skill, SkillContext, SkillLogger } from "../types.js";
import type { LazyAbortSignal } from "./lazy-abort-signal.js";

/** The parts of the executor a handler context needs. */
export interface ExecutionContextHost {
  /** Creates the per-execution logger (only when a handler asks for it). */
  createLogger(fields: Record<string, unknown>): SkillLogger;
  /** Runs a nested execution on behalf of `parent`. */
  callFrom<Output>(parent: ExecutionContext, reference: string, input: unknown): Promise<Output>;
}

/** The `ctx` a handler receives. The logger is created on first use, keeping the hot path lean. */
export class ExecutionContext implements SkillContext {
  private cachedLogger: SkillLogger | undefined;

  constructor(
    private readonly host: ExecutionContextHost,
    readonly skill: Skill,
    readonly executionId: string,
    readonly attempt: number,
    readonly apiKeyId: string,
    readonly sessionId: string | null,
    private readonly abort: LazyAbortSignal,
  ) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get logger(): SkillLogger {
    this.cachedLogger ??= this.host.createLogger({
      skill: `${this.skill.name}@${this.skill.version}`,
      executionId: this.executionId,
      attempt: this.attempt,
    });
    return this.cachedLogger;
  }

  call<Output = unknown>(reference: string, input: unknown): Promise<Output> {
    return this.host.callFrom<Output>(this, reference, input);
  }
}
