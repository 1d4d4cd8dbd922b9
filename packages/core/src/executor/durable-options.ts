/**
 * The options of the durable-execution operations of `SkillExecutor` (`wait`, `cancel`,
 * `approve`, `reject`, `events`, `watchExecutions`).
 */

/** Limits the caller's view to its own executions: another owner's is `EXECUTION_NOT_FOUND`. */
export interface ExecutionAccess {
  /** The caller's owner id; omitted, the host itself (any owner) asks. */
  apiKeyId?: string;
}

/** Options of `wait()`. */
export interface WaitOptions extends ExecutionAccess {
  /** Ends the wait with `WAIT_ABORTED` (the execution goes on). */
  signal?: AbortSignal;
  /** Ends the wait with `WAIT_TIMEOUT` after this many ms (the execution goes on). */
  timeoutMs?: number;
  /** Also resolve when the execution stops at `awaiting_approval`. */
  returnOnApproval?: boolean;
}

/** Options of `approve()`. */
export interface ApproveOptions extends ExecutionAccess {
  /** Who approves (a person's name or id): recorded with the decision. */
  by: string;
  /** An edited input to run with instead: validated against the skill's input schema first. */
  input?: unknown;
  /** A note recorded with the decision. */
  comment?: string;
}

/** Options of `reject()`. */
export interface RejectOptions extends ExecutionAccess {
  /** Who rejects: recorded with the decision. */
  by: string;
  /** Why: recorded, and part of the execution's error message. */
  reason?: string;
}

/** Options of `cancel()`. */
export interface CancelOptions extends ExecutionAccess {
  /** Why: part of the execution's error message and data. */
  reason?: string;
}

/** Options of `events()`. */
export interface EventsOptions extends ExecutionAccess {
  /** Ends the stream with `WAIT_ABORTED`. */
  signal?: AbortSignal;
}

/** Which executions `watchExecutions()` follows. */
export interface WatchFilter extends ExecutionAccess {
  /** Only executions of this skill (by name). */
  skill?: string;
  /** Only these executions. */
  ids?: readonly string[];
  /** Ends the stream with `WAIT_ABORTED`. */
  signal?: AbortSignal;
}
