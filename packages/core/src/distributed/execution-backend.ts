import type {
  CancelOptions,
  EventsOptions,
  RejectOptions,
  WaitOptions,
  WatchFilter,
} from "../executor/durable-options.js";
import type { ExecutionStreamEvent } from "../executor/execution-event-hub.js";
import type { JobOptions } from "../executor/job-store.js";
import type { ExecutionApproval, Skill, SkillExecution, SubmitOptions } from "../types.js";
import type { ExecutionRecordStore } from "./execution-record-store.js";

/**
 * A submit as the executor hands it to a backend: the skill resolved for the caller, the input
 * checked (nesting, JSON) and passed through the interceptors' `audit` hooks — everything that
 * needs this host's registry and interceptors is done; the backend records and dispatches.
 */
export interface BackendSubmit {
  /** The new execution's id (UUIDv7), already seen by the `audit` hooks. */
  id: string;
  skill: Skill;
  /** The caller's owner id. */
  caller: string;
  /** The input as given (the backend hashes it for an idempotency key). */
  input: unknown;
  /** The input as it will run (kept in the side table until the execution ends). */
  rawInputJson: string | null;
  /** The input as the audit trail keeps it (redacted by `audit` hooks). */
  auditedInputJson: string | null;
  options: SubmitOptions;
  /** The call's options that outlive it, with the submitter's span (`JobOptions`). */
  jobOptions: JobOptions;
  /**
   * The call's `totalTimeoutMs` (null: no deadline): the backend's record sets the deadline this
   * long after its own clock's now, since this host's clock may disagree with the workers'.
   */
  totalTimeoutMs: number | null;
}

/** An approval as the executor hands it to a backend: the decision made, an edited input checked and audited. */
export interface BackendApprove {
  id: string;
  /** The caller's owner id, when a caller (not the host) decides. */
  apiKeyId?: string;
  approval: ExecutionApproval;
  rawInputJson?: string;
  auditedInputJson?: string;
}

/**
 * Where a `SkillExecutor` sends executions instead of running them itself: a shared record and a
 * queue that other processes take work from (`@skillbox/distributed` implements it over
 * PostgreSQL and BullMQ). With a backend, the executor still resolves references against its own
 * registry (every host loads the same skill folders) and checks the caller may run them; the
 * backend records, dispatches and reports. Every method honours `apiKeyId` exactly as the
 * executor's own methods do: another owner's execution is `EXECUTION_NOT_FOUND`. The listings and
 * statistics are the shared record's own (see {@link ExecutionRecordStore}), for the `owner` and
 * skill `names` the executor resolved from its registry.
 */
export interface ExecutionBackend
  extends Pick<
    ExecutionRecordStore,
    "list" | "count" | "listSummaries" | "skillStats" | "executionTimeline" | "durationHistogram"
  > {
  /** Records the execution `queued` and dispatches it; resolves with its id once it is durable. */
  submit(request: BackendSubmit): Promise<string>;
  wait(id: string, options?: WaitOptions): Promise<SkillExecution>;
  cancel(id: string, options?: CancelOptions): Promise<SkillExecution>;
  /**
   * Records an approval the executor prepared (decision, edited input checked against the
   * schema and audited) and dispatches the execution again. `APPROVAL_NOT_PENDING` when it no
   * longer waits, `EXECUTION_NOT_FOUND` for an id the caller cannot see.
   */
  approve(request: BackendApprove): Promise<SkillExecution>;
  reject(id: string, options: RejectOptions): Promise<SkillExecution>;
  events(id: string, options?: EventsOptions): AsyncGenerator<ExecutionStreamEvent, void, undefined>;
  watch(filter?: WatchFilter): AsyncGenerator<ExecutionStreamEvent, void, undefined>;
  get(id: string): Promise<SkillExecution | undefined>;
  /**
   * Hands over a nested `ctx.call` execution that ran and ended here (its final local row, as
   * audited) to the shared record, under the content hash of `skill`, the code that ran: the
   * audit trail every host reads shows it under its parent, and this host can forget its row.
   * Idempotent on the execution's id. Rejects when the record cannot be written (the caller
   * keeps its row).
   */
  recordNested(execution: SkillExecution, skill: Skill): Promise<void>;
  /** Stops following the shared record; executions go on elsewhere. */
  close(): Promise<void>;
}
