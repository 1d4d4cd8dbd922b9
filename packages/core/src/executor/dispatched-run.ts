import { contextOfStoredSpan } from "../telemetry/stored-span-context.js";
import type {
  ExecuteOptions,
  ExecutionApproval,
  ExecutionError,
  ExecutionProgress,
  ExecutionStatus,
  Skill,
  SkillExecution,
} from "../types.js";
import { DispatchCancellation } from "./dispatch-cancellation.js";
import { serialize } from "./execution-outcome.js";
import type { ExecutionPause, ExecutionRequest, ExecutionRun } from "./execution-run.js";
import type { ExecutionSink, RunFinish } from "./execution-sink.js";
import type { JobOptions } from "./job-store.js";

/** One execution another host recorded and this worker claimed (see `SkillExecutor.runDispatched`). */
export interface DispatchedRunRequest {
  /** The execution's id in the shared record: the handler's `ctx.executionId`. */
  executionId: string;
  /** This worker's own registry entry of the skill (the worker checked its content hash). */
  skill: Skill;
  /** The caller's raw input, parsed. */
  input: unknown;
  /** The caller's owner id. */
  apiKeyId: string;
  sessionId: string | null;
  parentExecutionId: string | null;
  idempotencyKey: string | null;
  /** The call's options the record kept: timeouts, retries, tool call id, the submitter's span. */
  options: JobOptions;
  /** Attempts earlier claims made: `ctx.attempt` continues from `attemptsSoFar + 1`. */
  attemptsSoFar: number;
  /** The granted approval of a run after a decision: the run does not ask again. Else null. */
  approval: ExecutionApproval | null;
  /** When the execution was created, ms since the epoch: its span starts there, and the queue wait counts to now. */
  createdAt: number;
  /**
   * Aborted when the run must stop: a cancel from another host, a lost lease, a deadline, the
   * worker's shutdown. The attempt stops at once (worker thread terminated, container killed);
   * `signal.reason` decides the outcome: a `SkillboxError` with code `TIMEOUT` or
   * `DEADLINE_EXCEEDED` ends it `timeout` (`TIMEOUT`), anything else `cancelled` (`CANCELLED`).
   */
  signal: AbortSignal;
  /** Told of each progress report as the handler makes it (a throw is logged, never the run's failure). */
  onProgress?(progress: ExecutionProgress): void;
}

/** What became of a dispatched run: for the worker to commit in the shared record. */
export type DispatchedRunOutcome =
  | {
      kind: "final";
      status: ExecutionStatus;
      /** The output as the audit trail keeps it (through the `audit` hooks), or null. */
      output: unknown;
      /** `output` as JSON text, as `FinalOutcome.outputJson` takes it (a value JSON cannot write is a note). */
      outputJson: string | null;
      error: ExecutionError | null;
      /** Attempts of the whole execution, `attemptsSoFar` included. */
      attempts: number;
      durationMs: number | null;
      traceId: string | null;
      spanId: string | null;
    }
  | {
      kind: "paused";
      /** The approval asked for (`decision: null`). */
      approval: ExecutionApproval;
      /**
       * How long the request may wait, in ms, or null for ever: the shared record sets the
       * deadline from its own clock (this host's may disagree with the database's).
       */
      approvalTimeoutMs: number | null;
      attempts: number;
    };

const NO_ROW = Promise.resolve(0);

/**
 * The {@link ExecutionSink} of one dispatched run: nothing goes to the local audit trail — the
 * execution's record is the shared one, which the worker commits from the outcome kept here —
 * and nothing to this executor's listeners or event streams, which speak of the local trail. So
 * a worker that runs millions of them keeps no row, event or entry of any once it returned.
 * Progress reaches the worker through the run's `onProgress`.
 */
class DispatchedSink implements ExecutionSink {
  readonly findable = false;
  outcome: DispatchedRunOutcome | undefined;

  start(): Promise<number> {
    return NO_ROW;
  }

  progress(): void {}

  settleProgress(): void {}

  pause(run: ExecutionRun, pause: ExecutionPause): SkillExecution {
    const { approval } = pause;
    this.outcome = {
      kind: "paused",
      approval,
      approvalTimeoutMs: pause.approvalTimeoutMs,
      attempts: pause.attempts,
    };
    return run.snapshot();
  }

  finish(run: ExecutionRun, finish: RunFinish): Promise<unknown> {
    const { record } = run;
    this.outcome = {
      kind: "final",
      status: finish.status,
      output: finish.output,
      outputJson: serialize(finish.output),
      error: finish.error,
      attempts: finish.attempts,
      durationMs: finish.duration,
      traceId: record.traceId,
      spanId: record.spanId,
    };
    return NO_ROW;
  }

  finished(): void {}
}

/**
 * Runs a dispatched execution through `run` — the executor's one pipeline, as a queued execution
 * of this host runs (see `SkillExecutor.runDispatched`) — and resolves with its outcome.
 */
export async function runDispatched(
  request: DispatchedRunRequest,
  run: (execution: ExecutionRequest) => Promise<SkillExecution>,
): Promise<DispatchedRunOutcome> {
  const { skill } = request;
  if (!skill.enabled) {
    // As the local queue answers a queued execution of a skill disabled meanwhile.
    return {
      kind: "final",
      status: "error",
      output: null,
      outputJson: null,
      error: {
        code: "SKILL_DISABLED",
        message: `${skill.name}@${skill.version} is disabled on this worker; enable it and submit again`,
      },
      attempts: request.attemptsSoFar,
      durationMs: 0,
      traceId: null,
      spanId: null,
    };
  }
  const sink = new DispatchedSink();
  const { parentSpan, ...kept } = request.options;
  const options: ExecuteOptions = { ...(kept as ExecuteOptions), apiKeyId: request.apiKeyId };
  if (request.parentExecutionId !== null) options.parentExecutionId = request.parentExecutionId;
  const { onProgress } = request;
  if (onProgress !== undefined) options.onProgress = (progress) => onProgress(progress);
  await run({
    skill,
    input: request.input,
    options,
    caller: request.apiKeyId,
    depth: 0,
    inputHash: null,
    parentContext: contextOfStoredSpan(parentSpan),
    resume: {
      id: request.executionId,
      // No local row: the sink never reads it.
      rowid: 0,
      createdAt: request.createdAt,
      attempts: request.attemptsSoFar,
      approval: request.approval,
      sessionId: request.sessionId,
      idempotencyKey: request.idempotencyKey,
      rerunnable: skill.idempotent === true,
    },
    sink,
    signalCancellation: new DispatchCancellation(request.signal),
  });
  if (sink.outcome === undefined) {
    // Every run ends through its sink's `finish` or `pause`; a run that rejects never gets here.
    throw new Error(`Dispatched execution ${request.executionId} ended without an outcome`);
  }
  return sink.outcome;
}
