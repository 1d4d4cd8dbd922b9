import { type ListTasksRequest, type ListTasksResponse, type Task, TaskState } from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import type { ServerCallContext, TaskStore } from "@a2a-js/sdk/server";
import type { SkillExecutor } from "@skillbox/core";
import { BoundedTaskStore, type BoundedTaskStoreOptions, MAX_LIST_PAGE_BYTES } from "./bounded-task-store.js";
import { executionToTask, statusesOf } from "./execution-to-task.js";
import { FINAL_TASK_STATES } from "./final-task-states.js";
import { ownerOfContext } from "./owner-user.js";
import { shrinkTask } from "./shrink-task.js";

/** Options of {@link ExecutionTaskStore}. */
export interface ExecutionTaskStoreOptions extends BoundedTaskStoreOptions {
  executor: SkillExecutor;
}

/** States after which the SDK folds no more events of the request into the task. */
const SETTLED_STATES: ReadonlySet<TaskState | undefined> = new Set([
  ...FINAL_TASK_STATES,
  TaskState.TASK_STATE_INPUT_REQUIRED,
]);

/** Tasks whose in-flight copy is kept at most: far more than run at once. */
const MAX_IN_FLIGHT = 10_000;

/** Executions read per step while a `statusTimestampAfter` filter skips some. */
const SCAN_STEP = 200;

/**
 * The A2A SDK's `TaskStore` over the executor's durable audit trail: a task is an execution (the
 * task id is the execution id), derived from its record by `executionToTask`, so a task survives
 * a restart of the host and shows what another host did to it (an approval, a cancel).
 *
 * While the SDK is folding a request's events into a task (from its first save until it saves a
 * final or `input-required` state), loads answer with what the SDK saved last instead: the
 * events trail the record, and a record that is already final would make the SDK refuse — and
 * log — each event still on its way. That copy lives in memory only for the task's run (and
 * is dropped by {@link release} when the request ends first).
 *
 * A task that never became an execution — a message naming an unknown or disabled skill — is
 * kept in memory only, in a {@link BoundedTaskStore} with the given bounds.
 *
 * Tasks are the caller's own: the owner id is the SDK user's `userName` (`public` without one),
 * and another owner's execution is "task not found". `tasks/list` lists the owner's executions
 * from every front (HTTP, MCP and A2A alike), newest first; a page stays under 1 MiB and each
 * task in it under `maxBytesPerTask`, its larger parts replaced by a reference to
 * `GET /api/executions/<id>` (`tasks/get` answers the whole task). `totalSize` does not apply
 * `statusTimestampAfter`.
 */
export class ExecutionTaskStore implements TaskStore {
  private readonly executor: SkillExecutor;
  /** Tasks no execution backs (refused before anything ran). */
  private readonly unbacked: BoundedTaskStore;
  /** What the SDK saved last of each task whose events it is still folding, by task id. */
  private readonly inFlight = new Map<string, { task: Task; owner: string }>();

  constructor(options: ExecutionTaskStoreOptions) {
    this.executor = options.executor;
    // It checks the bounds; listing needs the per-task one, which it defaults.
    this.unbacked = new BoundedTaskStore(options);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const owner = ownerOfContext(context);
    const saving = this.inFlight.get(taskId);
    if (saving !== undefined && saving.owner === owner) return structuredClone(saving.task);
    const execution = await this.executor.getExecution(taskId);
    // Another owner's execution is "task not found": only the caller's unbacked tasks are left.
    return execution !== undefined && execution.apiKeyId === owner
      ? executionToTask(execution)
      : this.unbacked.load(taskId, context);
  }

  /**
   * Forgets what the SDK saved of `taskId` while folding its events: the request doing so ended
   * before the task settled (a stream whose reader went away), so from now on the record answers.
   */
  release(taskId: string): void {
    this.inFlight.delete(taskId);
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const settled = SETTLED_STATES.has(task.status?.state);
    // Also for a task the SDK failed on its own (an executor that threw): it carries no metadata.
    if (settled) this.inFlight.delete(task.id);
    // The SkillAgentExecutor puts the execution id in the metadata of every task it backs; the
    // record holds everything else.
    if (task.metadata?.executionId === task.id) {
      if (!settled) this.remember(task, ownerOfContext(context));
      return;
    }
    await this.unbacked.save(task, context);
  }

  private remember(task: Task, owner: string): void {
    // Re-inserted, so the oldest entry is the one least recently saved.
    this.inFlight.delete(task.id);
    this.inFlight.set(task.id, { task: structuredClone(task), owner });
    // A request that ended without settling and without `release` (none is known) must not
    // make this grow without end; the record answers for a task dropped here.
    if (this.inFlight.size > MAX_IN_FLIGHT) {
      const oldest = this.inFlight.keys().next().value;
      if (oldest !== undefined) this.inFlight.delete(oldest);
    }
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? 50;
    const start = params.pageToken ? offsetOf(params.pageToken) : 0;
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
    const filters = {
      owner: ownerOfContext(context),
      ...(params.contextId ? { sessionId: params.contextId } : {}),
      ...(params.status ? { status: statusesOf(params.status) } : {}),
    };
    const tasks: Task[] = [];
    let bytes = 0;
    let offset = start;
    let exhausted = false;
    let full = false;
    // Without a time filter one read is the page; with one, steps skip what it leaves out.
    while (!full && tasks.length < pageSize && !exhausted) {
      const limit = after === undefined ? pageSize - tasks.length : SCAN_STEP;
      const executions = await this.executor.listExecutions({ ...filters, limit, offset });
      exhausted = executions.length < limit;
      for (const execution of executions) {
        const task = executionToTask(execution);
        if (after !== undefined && !(Date.parse(task.status?.timestamp ?? "") > after)) {
          offset++;
          continue;
        }
        const entry = shrinkTask(
          params.includeArtifacts ? task : { ...task, artifacts: [] },
          this.unbacked.maxBytesPerTask,
        );
        if (tasks.length > 0 && (bytes + entry.bytes > MAX_LIST_PAGE_BYTES || tasks.length === pageSize)) {
          full = true;
          break;
        }
        tasks.push(entry.task);
        bytes += entry.bytes;
        offset++;
      }
    }
    // The task that did not fit is the next page's first; a short read left nothing after it.
    const more =
      full ||
      (!exhausted && (await this.executor.listExecutions({ ...filters, limit: 1, offset })).length > 0);
    return {
      tasks,
      nextPageToken: more ? Buffer.from(String(offset)).toString("base64url") : "",
      pageSize,
      totalSize: await this.executor.countExecutions(filters),
    };
  }
}

function offsetOf(pageToken: string): number {
  const offset = Number(Buffer.from(pageToken, "base64url").toString("utf8"));
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new RequestMalformedError("pageToken does not come from a listing of this server");
  }
  return offset;
}
