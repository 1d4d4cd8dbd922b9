import type { ExecutionProgress, SkillExecution } from "../types.js";
import { serialize } from "./execution-outcome.js";
import type { DurableSide, ExecutionEvent, ExecutionPause, ExecutionRun } from "./execution-run.js";
import type { ExecutionSink, RunFinish } from "./execution-sink.js";
import type { ExecutionStore } from "./execution-store.js";

/** What {@link LocalAuditSink} writes to and tells. */
export interface LocalAuditSinkOptions {
  store: ExecutionStore;
  durable: DurableSide;
  /** Whether anyone listens to the executor's `event`: the record is copied for `started` only then. */
  listening(event: ExecutionEvent): boolean;
  notify(event: ExecutionEvent, execution: SkillExecution): void;
}

/**
 * Where the executions of this host go (see {@link ExecutionSink}): the `running` and final rows
 * in the local audit trail (group-committed), progress, pauses and events through the durable
 * side, and the executor's `started` / `finished` listeners. One per executor, shared by its runs.
 */
export class LocalAuditSink implements ExecutionSink {
  readonly findable = true;

  constructor(private readonly options: LocalAuditSinkOptions) {}

  start(run: ExecutionRun): Promise<number> {
    const { store, durable, listening } = this.options;
    const { record, request } = run;
    const { resume } = request;
    if (resume !== undefined) {
      // The queue's claim wrote the `running` row already (and `approve()` an edited input).
      this.told(run);
      return Promise.resolve(resume.rowid);
    }
    const { runningJob, onCommitted, inputHash } = request;
    const committed = store.start(
      record,
      serialize(run.storedInput),
      run.createdAt,
      inputHash === null && runningJob === undefined
        ? undefined
        : {
            inputHash,
            alsoWrite: runningJob === undefined ? undefined : () => runningJob(record.id, run.createdAt),
          },
    );
    if (!listening("started") && !durable.follows(record.id) && onCommitted === undefined) return committed;
    return committed.then((rowid) => {
      onCommitted?.(record.id);
      this.told(run);
      return rowid;
    });
  }

  progress(run: ExecutionRun, progress: ExecutionProgress): void {
    this.options.durable.progress(run, progress);
  }

  settleProgress(run: ExecutionRun): void {
    this.options.durable.settleProgress(run);
  }

  pause(run: ExecutionRun, pause: ExecutionPause): SkillExecution {
    return this.options.durable.paused(run, pause);
  }

  finish(run: ExecutionRun, finish: RunFinish): Promise<unknown> {
    const { record, request } = run;
    return this.options.store.finish({
      rowid: finish.rowid,
      id: record.id,
      status: finish.status,
      outputJson: serialize(finish.output),
      error: finish.error,
      attempts: finish.attempts,
      duration: finish.duration,
      finishedAt: finish.finishedAt,
      traceId: record.traceId,
      spanId: record.spanId,
      // A run the queue resumed, or a submit that started at once with its job: the job goes too.
      job:
        request.resume !== undefined || request.runningJob !== undefined
          ? { apiKeyId: record.apiKeyId, skillName: record.skillName }
          : undefined,
    });
  }

  finished(execution: SkillExecution): void {
    const { listening, notify, durable } = this.options;
    if (listening("finished")) notify("finished", execution);
    durable.finished(execution);
  }

  /** Tells `started` listeners and event subscribers that the row is `running`. */
  private told(run: ExecutionRun): void {
    const { listening, notify, durable } = this.options;
    const started = listening("started");
    const following = durable.follows(run.id);
    if (!started && !following) return;
    const execution = run.snapshot();
    if (started) notify("started", execution);
    if (following) durable.started(execution);
  }
}
