import { SkillboxError } from "../errors/skillbox-error.js";
import type { InterceptorContext } from "../interceptors/define-interceptor.js";
import type { ExecutionApproval, ProgressReport, Skill, SkillLogger } from "../types.js";
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
  /** The approval granted (on a resumed run, or inherited from an approved parent), else null. */
  approval: ExecutionApproval | null;
  /** Where the handler's progress reports go (the execution run). */
  progressSink: { progress(report: ProgressReport): void };
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
  readonly approval: ExecutionApproval | null;
  private readonly progressSink: { progress(report: ProgressReport): void };
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
    this.approval = identity.approval;
    this.progressSink = identity.progressSink;
  }

  /** Takes a handler's progress report (see `SkillContext.progress`). */
  reportProgress(report: ProgressReport): void {
    this.progressSink.progress(report);
  }

  /**
   * Asks for a person's approval before the execution goes on (from an interceptor's `before`):
   * a no-op once it was approved, else it throws `APPROVAL_REQUIRED` with `reason`, and the
   * execution stops at `awaiting_approval`. After an approval the execution runs again from its
   * first `before`, where this call then returns.
   */
  requireApproval(reason: string): void {
    if (this.approval?.decision === "approved") return;
    throw new SkillboxError(
      "APPROVAL_REQUIRED",
      typeof reason === "string" && reason !== "" ? reason : `${this.skill.name} needs approval`,
      { data: { requestedBy: "interceptor" } },
    );
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
