import type { ExecutionError, ExecutionProgress, ExecutionStatus, SkillExecution } from "../types.js";
import type { ExecutionPause, ExecutionRun } from "./execution-run.js";

/** The final state of a run as {@link ExecutionSink.finish} receives it. */
export interface RunFinish {
  /** What {@link ExecutionSink.start} resolved with. */
  rowid: number;
  status: ExecutionStatus;
  /** The output as the audit trail keeps it (through the `audit` hooks), or null. */
  output: unknown;
  error: ExecutionError | null;
  /** Attempts of the whole execution: earlier runs' and this one's. */
  attempts: number;
  /** ms from the run's start. */
  duration: number;
  /** When it ended, ms since the epoch (this host's clock). */
  finishedAt: number;
}

/**
 * Where one {@link ExecutionRun} records what becomes of it: the only part of a run that differs
 * between an execution of this host (its rows in the local audit trail, its events to this
 * process's listeners: `LocalAuditSink`) and one another host recorded and a distributed worker
 * runs (its outcome handed back to the worker, which commits it in the shared record:
 * `DispatchedSink`). Everything else — hooks, schema checks, runtimes, timeouts, retries, spans,
 * metrics — is the run's own and the same for both.
 */
export interface ExecutionSink {
  /**
   * Whether the run is among this executor's active runs while it runs (what `cancel(id)` and
   * `wait(id)` find): only for executions the local audit trail knows.
   */
  readonly findable: boolean;
  /** Records the start (the `running` row); resolves with the handle later calls pass back. */
  start(run: ExecutionRun): Promise<number>;
  /** Takes a checked progress report (after the run's record has it, before `onProgress`). */
  progress(run: ExecutionRun, progress: ExecutionProgress): void;
  /** The run ends: what it reported last is stored before its outcome. */
  settleProgress(run: ExecutionRun): void;
  /** The execution stops to wait for approval; returns its record as it then stands. */
  pause(run: ExecutionRun, pause: ExecutionPause): SkillExecution;
  /** Records the final state; resolves once it is kept. */
  finish(run: ExecutionRun, finish: RunFinish): Promise<unknown>;
  /** The final record, after the `onFinish` hooks saw it: tells whoever listens. */
  finished(execution: SkillExecution): void;
}
