import { type ListTasksRequest, type ListTasksResponse, type Task, TaskState } from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import type { ServerCallContext, TaskStore } from "@a2a-js/sdk/server";

/** Tasks kept by default. */
export const DEFAULT_MAX_TASKS = 1000;
/**
 * Serialised size a `tasks/list` page stays under: a task's history holds its input and its
 * artifacts the output, so 100 tasks of big bodies would be hundreds of megabytes in one answer.
 */
const MAX_LIST_PAGE_BYTES = 1024 * 1024;

const FINAL_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/**
 * The A2A SDK's `TaskStore`, in memory and bounded: it keeps at most `maxTasks` finished tasks
 * (completed, failed, canceled, rejected) across all callers and forgets the least recently
 * updated one when a new task needs the room; running tasks are never dropped. A forgotten or
 * restarted-away task answers `tasks/get` with "task not found" — the execution itself stays in
 * the durable audit trail (`/api/executions`). Tasks are scoped by tenant and caller (the SDK
 * user's `userName`, the owner id), so callers never see each other's tasks.
 */
export class BoundedTaskStore implements TaskStore {
  /** Insertion order is update order: a save moves the task to the end. */
  private readonly tasks = new Map<string, Task>();

  constructor(private readonly maxTasks: number = DEFAULT_MAX_TASKS) {
    if (!Number.isInteger(maxTasks) || maxTasks < 1) {
      throw new RangeError(
        `BoundedTaskStore: maxTasks must be a whole number of at least 1, got ${maxTasks}`,
      );
    }
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const task = this.tasks.get(keyOf(context, taskId));
    return task === undefined ? undefined : structuredClone(task);
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const key = keyOf(context, task.id);
    this.tasks.delete(key);
    this.tasks.set(key, structuredClone(task));
    this.evict();
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const scope = keyOf(context, "");
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
    const matching = [...this.tasks]
      .filter(([key]) => key.startsWith(scope))
      .map(([, task]) => task)
      .filter((task) => !params.contextId || task.contextId === params.contextId)
      .filter((task) => !params.status || task.status?.state === params.status)
      .filter((task) => after === undefined || Date.parse(task.status?.timestamp ?? "") > after)
      .sort((a, b) => cursorOf(b).localeCompare(cursorOf(a)));
    const start = params.pageToken ? startAfter(matching, params.pageToken) : 0;
    const pageSize = params.pageSize ?? 50;
    // The page ends early (with a nextPageToken) before it would cross MAX_LIST_PAGE_BYTES; the
    // first task is always in it, so paging always moves on.
    const page: Task[] = [];
    let bytes = 0;
    for (const task of matching.slice(start, start + pageSize)) {
      const entry = structuredClone(params.includeArtifacts ? task : { ...task, artifacts: [] });
      const size = Buffer.byteLength(JSON.stringify(entry));
      if (page.length > 0 && bytes + size > MAX_LIST_PAGE_BYTES) break;
      page.push(entry);
      bytes += size;
    }
    const last = page.at(-1);
    return {
      tasks: page,
      nextPageToken:
        last !== undefined && start + page.length < matching.length
          ? Buffer.from(cursorOf(last)).toString("base64url")
          : "",
      pageSize,
      totalSize: matching.length,
    };
  }

  /** Drops the least recently updated finished tasks while there are more than `maxTasks`. */
  private evict(): void {
    let excess = this.tasks.size - this.maxTasks;
    if (excess <= 0) return;
    for (const [key, task] of this.tasks) {
      if (excess === 0) return;
      if (task.status !== undefined && FINAL_STATES.has(task.status.state)) {
        this.tasks.delete(key);
        excess -= 1;
      }
    }
  }
}

function keyOf(context: ServerCallContext, taskId: string): string {
  return `${context.tenant ?? ""}\u0000${context.user?.userName ?? ""}\u0000${taskId}`;
}

/** Newest first by status time, then by id: the order `tasks/list` pages through. */
function cursorOf(task: Task): string {
  return `${task.status?.timestamp ?? ""}|${task.id}`;
}

function startAfter(tasks: Task[], pageToken: string): number {
  const cursor = Buffer.from(pageToken, "base64url").toString("utf8");
  const index = tasks.findIndex((task) => cursorOf(task) === cursor);
  if (index === -1) throw new RequestMalformedError("pageToken does not name a task of this listing");
  return index + 1;
}
