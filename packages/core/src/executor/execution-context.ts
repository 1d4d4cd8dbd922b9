import { traceHeaders } from "../telemetry/trace-headers.js";
import type {
  ExecutionApproval,
  HostLifecycle,
  ProgressReport,
  Skill,
  SkillContext,
  SkillLogger,
} from "../types.js";
import type { NestedCallParent } from "./execution-port.js";
import type { ExecutionState } from "./execution-state.js";
import type { LazyAbortSignal } from "./lazy-abort-signal.js";

/**
 * The `ctx` a handler receives for one attempt. It reaches the host only through the
 * execution's port (nested calls, loggers, the host's lifecycle). The signal and logger are
 * created on first use.
 */
export class ExecutionContext implements SkillContext, NestedCallParent {
  private cachedLogger: SkillLogger | undefined;

  constructor(
    private readonly execution: ExecutionState,
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

  get depth(): number {
    return this.execution.depth;
  }

  get approval(): ExecutionApproval | null {
    return this.execution.approval;
  }

  /** Reports progress; a report after this attempt ended (timed out, cancelled) is dropped. */
  progress(report: ProgressReport): void {
    if (this.abort.aborted) return;
    this.execution.reportProgress(report);
  }

  get hostLifecycle(): HostLifecycle {
    return this.execution.port.hostLifecycle;
  }

  get logger(): SkillLogger {
    this.cachedLogger ??= this.execution.port.logger({
      skill: `${this.skill.name}@${this.skill.version}`,
      executionId: this.executionId,
      attempt: this.attempt,
    });
    return this.cachedLogger;
  }

  traceHeaders(): Record<string, string> {
    return traceHeaders();
  }

  call<Output = unknown>(reference: string, input: unknown): Promise<Output> {
    return this.execution.port.call<Output>(this, reference, input);
  }
}
