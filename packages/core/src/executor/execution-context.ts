import type { HostLifecycle, Skill, SkillContext, SkillLogger } from "../types.js";
import type { ExecutionLoggerFactory, ExecutionState } from "./execution-state.js";
import type { LazyAbortSignal } from "./lazy-abort-signal.js";

/** The parts of the executor a handler context needs. */
export interface ExecutionContextHost extends ExecutionLoggerFactory {
  /** Runs a nested execution on behalf of `parent`. */
  callFrom<Output>(parent: ExecutionContext, reference: string, input: unknown): Promise<Output>;
  /** Where handlers register cleanup for the host's close. */
  readonly hostLifecycle: HostLifecycle;
}

/** The `ctx` a handler receives for one attempt. The signal and logger are created on first use. */
export class ExecutionContext implements SkillContext {
  private cachedLogger: SkillLogger | undefined;

  constructor(
    private readonly host: ExecutionContextHost,
    readonly execution: ExecutionState,
    readonly attempt: number,
    private readonly abort: LazyAbortSignal,
  ) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get skill(): Skill {
    return this.execution.skill;
  }

  get executionId(): string {
    return this.execution.executionId;
  }

  get apiKeyId(): string {
    return this.execution.apiKeyId;
  }

  get sessionId(): string | null {
    return this.execution.sessionId;
  }

  get hostLifecycle(): HostLifecycle {
    return this.host.hostLifecycle;
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
