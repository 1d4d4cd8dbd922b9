import type { ListTasksRequest, ListTasksResponse, Task } from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import type { ServerCallContext, TaskStore } from "@a2a-js/sdk/server";
import { SkillboxError } from "@skillbox/core";
import { FINAL_TASK_STATES } from "./final-task-states.js";
import { byteSizeOf, shrinkTask } from "./shrink-task.js";

/** Tasks kept by default. */
export const DEFAULT_MAX_TASKS = 1000;
/** Bytes (serialised) all kept tasks may hold together by default: 64 MiB. */
export const DEFAULT_MAX_TASK_BYTES = 64 * 1024 * 1024;
/** Bytes (serialised) one finished task may hold by default: 1 MiB. */
export const DEFAULT_MAX_BYTES_PER_TASK = 1024 * 1024;
/**
 * Serialised size a `tasks/list` page stays under: a task's history holds its input and its
 * artifacts the output, so 100 tasks of big bodies would be hundreds of megabytes in one answer.
 */
export const MAX_LIST_PAGE_BYTES = 1024 * 1024;

/** Options of {@link BoundedTaskStore}. */
export interface BoundedTaskStoreOptions {
  /** Tasks kept (default 1000). */
  maxTasks?: number;
  /** Serialised bytes all kept tasks hold together (default 64 MiB). */
  maxTaskBytes?: number;
  /**
   * Serialised bytes one finished task keeps (default 1 MiB): beyond it its largest parts are
   * replaced by a reference to `GET /api/executions/<executionId>`.
   */
  maxBytesPerTask?: number;
}

/** A kept task with what it counts for. */
interface StoredTask {
  task: Task;
  bytes: number;
  owner: string;
  finished: boolean;
}

/** What one owner's tasks (running and finished) hold. */
interface OwnerUsage {
  tasks: number;
  bytes: number;
  finishedTasks: number;
}

/**
 * The A2A SDK's `TaskStore`, in memory and bounded by count (`maxTasks`) and by serialised bytes
 * (`maxTaskBytes`), so its memory is bounded whatever the tasks carry:
 *
 * - A finished task (completed, failed, canceled, rejected) keeps at most `maxBytesPerTask`:
 *   beyond it its largest parts (output, input, messages) become a small text part naming the
 *   execution and `GET /api/executions/<executionId>`, where the whole execution stays; state
 *   and metadata are kept. A running task is kept whole (the SDK reads it back to build the
 *   answer of `message/send`); its input is bounded by the server's body limit.
 * - Over either budget, finished tasks are forgotten, the least recently updated first, of the
 *   owner holding the most (bytes when over `maxTaskBytes`, tasks when over `maxTasks`), so one
 *   caller's flood forgets that caller's tasks before anyone else's. Running tasks are never
 *   forgotten: running tasks alone may exceed the budgets (by at most the executor's concurrency
 *   times the body limit and output), and the store is back under them once they finish.
 *
 * A forgotten or restarted-away task answers `tasks/get` with "task not found" — the execution
 * itself stays in the durable audit trail (`/api/executions`). Tasks are scoped by tenant and
 * caller (the SDK user's `userName`, the owner id), so callers never see each other's tasks.
 */
export class BoundedTaskStore implements TaskStore {
  /** Insertion order is update order: a save moves the task to the end. */
  private readonly tasks = new Map<string, StoredTask>();
  private readonly owners = new Map<string, OwnerUsage>();
  private readonly maxTasks: number;
  private readonly maxTaskBytes: number;
  /** Serialised bytes one finished task keeps (`maxBytesPerTask`, defaulted and checked). */
  readonly maxBytesPerTask: number;
  private bytes = 0;
  private finishedTasks = 0;

  /** `options` as a number is `maxTasks` (the earlier signature). */
  constructor(options: BoundedTaskStoreOptions | number = {}) {
    const given = typeof options === "number" ? { maxTasks: options } : options;
    this.maxTasks = checkedCount("maxTasks", given.maxTasks ?? DEFAULT_MAX_TASKS);
    this.maxTaskBytes = checkedCount("maxTaskBytes", given.maxTaskBytes ?? DEFAULT_MAX_TASK_BYTES);
    this.maxBytesPerTask = checkedCount(
      "maxBytesPerTask",
      given.maxBytesPerTask ?? Math.min(DEFAULT_MAX_BYTES_PER_TASK, this.maxTaskBytes),
    );
    if (this.maxBytesPerTask > this.maxTaskBytes) {
      throw new SkillboxError(
        "SERVER_CONFIG_INVALID",
        `BoundedTaskStore: maxBytesPerTask (${this.maxBytesPerTask}) must not exceed maxTaskBytes ` +
          `(${this.maxTaskBytes}); raise maxTaskBytes or lower maxBytesPerTask`,
        { data: { maxBytesPerTask: this.maxBytesPerTask, maxTaskBytes: this.maxTaskBytes } },
      );
    }
  }

  /** Tasks kept now (running and finished), for tests and metrics. */
  get size(): number {
    return this.tasks.size;
  }

  /** Serialised bytes the kept tasks hold now, the sum the `maxTaskBytes` budget bounds. */
  get retainedBytes(): number {
    return this.bytes;
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const stored = this.tasks.get(keyOf(context, taskId));
    return stored === undefined ? undefined : structuredClone(stored.task);
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const key = keyOf(context, task.id);
    this.remove(key);
    const finished = FINAL_TASK_STATES.has(task.status?.state);
    const copy = structuredClone(task);
    const { task: kept, bytes } = finished
      ? shrinkTask(copy, this.maxBytesPerTask)
      : { task: copy, bytes: byteSizeOf(copy) };
    const stored: StoredTask = { task: kept, bytes, owner: ownerOf(context), finished };
    this.tasks.set(key, stored);
    this.count(stored, 1);
    this.evict();
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const scope = keyOf(context, "");
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
    const matching = [...this.tasks]
      .filter(([key]) => key.startsWith(scope))
      .map(([, stored]) => stored.task)
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
      const size = byteSizeOf(entry);
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

  /**
   * While over a budget, forgets the least recently updated finished task of the owner holding
   * the most (bytes over `maxTaskBytes`, else tasks); among equals, the owner of the oldest one.
   */
  private evict(): void {
    while (this.finishedTasks > 0) {
      const overBytes = this.bytes > this.maxTaskBytes;
      if (!overBytes && this.tasks.size <= this.maxTasks) return;
      const usageOf = (usage: OwnerUsage) => (overBytes ? usage.bytes : usage.tasks);
      let most = -1;
      for (const usage of this.owners.values()) {
        if (usage.finishedTasks > 0) most = Math.max(most, usageOf(usage));
      }
      const oldest = [...this.tasks].find(([, stored]) => {
        const usage = this.owners.get(stored.owner);
        return stored.finished && usage !== undefined && usageOf(usage) === most;
      });
      if (oldest === undefined) return;
      this.remove(oldest[0]);
    }
  }

  private remove(key: string): void {
    const stored = this.tasks.get(key);
    if (stored === undefined) return;
    this.tasks.delete(key);
    this.count(stored, -1);
  }

  /** Adds (`sign` 1) or takes away (-1) a task from the totals and its owner's usage. */
  private count(stored: StoredTask, sign: 1 | -1): void {
    const finished = stored.finished ? sign : 0;
    this.bytes += sign * stored.bytes;
    this.finishedTasks += finished;
    const usage = this.owners.get(stored.owner) ?? { tasks: 0, bytes: 0, finishedTasks: 0 };
    usage.tasks += sign;
    usage.bytes += sign * stored.bytes;
    usage.finishedTasks += finished;
    if (usage.tasks === 0) this.owners.delete(stored.owner);
    else this.owners.set(stored.owner, usage);
  }
}

function checkedCount(field: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new SkillboxError(
      "SERVER_CONFIG_INVALID",
      `BoundedTaskStore: ${field} must be a whole number of at least 1, got ${value}`,
      { data: { field, value } },
    );
  }
  return value;
}

/** Whose task it is: the tenant and the caller, as in {@link keyOf}. */
function ownerOf(context: ServerCallContext): string {
  return `${context.tenant ?? ""}\u0000${context.user?.userName ?? ""}`;
}

function keyOf(context: ServerCallContext, taskId: string): string {
  return `${ownerOf(context)}\u0000${taskId}`;
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
