import type { InterceptorContext } from "../interceptors/define-interceptor.js";
import type { Skill, SkillLogger } from "../types.js";
import type { ExecutionPort } from "./execution-port.js";

/** Who runs what: the facts an {@link ExecutionState} is made of. */
export interface ExecutionIdentity
  extends Pick<
    InterceptorContext,
    "skill" | "input" | "executionId" | "parentExecutionId" | "apiKeyId" | "sessionId"
  > {
  port: ExecutionPort;
  /** 0 for a top-level execution, parent's depth + 1 for `ctx.call`. */
  depth: number;
}

/**
 * What interceptors see as `context` for one execution, and what its attempts share. `state`
 * and `logger` are created on first use, since most executions never touch them.
 */
export class ExecutionState implements InterceptorContext {
  readonly port: ExecutionPort;
  readonly skill: Skill;
  /** The input as it stands: `before` hooks may replace it, and the handler gets it. */
  input: unknown;
  readonly executionId: string;
  readonly parentExecutionId: string | null;
  readonly apiKeyId: string;
  readonly sessionId: string | null;
  readonly depth: number;
  private cachedState: Record<string, unknown> | undefined;
  private cachedLogger: SkillLogger | undefined;

  constructor(identity: ExecutionIdentity) {
    this.port = identity.port;
    this.skill = identity.skill;
    this.input = identity.input;
    this.executionId = identity.executionId;
    this.parentExecutionId = identity.parentExecutionId;
    this.apiKeyId = identity.apiKeyId;
    this.sessionId = identity.sessionId;
    this.depth = identity.depth;
  }

  get state(): Record<string, unknown> {
    this.cachedState ??= {};
    return this.cachedState;
  }

  get logger(): SkillLogger {
    this.cachedLogger ??= this.port.logger({
      skill: `${this.skill.name}@${this.skill.version}`,
      executionId: this.executionId,
    });
    return this.cachedLogger;
  }
}
