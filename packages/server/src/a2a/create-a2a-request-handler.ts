import {
  type CancelTaskRequest,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  TaskState,
} from "@a2a-js/sdk";
import {
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk/errors";
import {
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  type ServerCallContext,
  type TaskStore,
} from "@a2a-js/sdk/server";
import {
  isFinalExecutionStatus,
  isSkillboxError,
  type SkillExecution,
  type SkillExecutor,
  type SkillRegistry,
} from "@skillbox/core";
import { agentCardFor } from "./agent-card-for.js";
import { ExecutionTaskStore } from "./execution-task-store.js";
import { executionTaskUpdates } from "./execution-task-updates.js";
import { executionToTask } from "./execution-to-task.js";
import { FINAL_TASK_STATES } from "./final-task-states.js";
import { ownerOfContext } from "./owner-user.js";
import { readSkillCall } from "./read-skill-call.js";
import { SkillAgentExecutor } from "./skill-agent-executor.js";

/** Options of {@link createA2aRequestHandler}. */
export interface A2aRequestHandlerOptions {
  registry: SkillRegistry;
  executor: SkillExecutor;
  /** Tasks no execution backs (refused before running) kept in memory (default 1000). */
  maxTasks?: number;
  /** Serialised bytes those tasks hold together (default 64 MiB). */
  maxTaskBytes?: number;
  /** Serialised bytes one task of a `tasks/list` page holds (default 1 MiB). */
  maxBytesPerTask?: number;
  /** The task store to use instead of an {@link ExecutionTaskStore} with the limits above. */
  taskStore?: TaskStore;
  /** Whether callers authenticate with API keys (the card the handler holds says so). */
  apiKeysConfigured?: boolean;
}

/** How long `tasks/cancel` waits for a cancel another host carries out. */
const CANCEL_WAIT_MS = 10_000;

/**
 * The SDK's `DefaultRequestHandler` over {@link SkillAgentExecutor} and an
 * {@link ExecutionTaskStore}: what the A2A transports (`JsonRpcTransportHandler`,
 * `LegacyJsonRpcTransportHandler`, or the SDK's Express `jsonRpcHandler`) dispatch to. The
 * caller's owner id is the `userName` of the `ServerCallContext`'s user.
 *
 * Before anything runs, `message/send` and `message/stream` are refused (JSON-RPC -32602) when
 * the message continues an existing task (a skill run takes one message; send a new one, with
 * the same `contextId` to group them) or does not say which skill to run with what input.
 *
 * Tasks are executions, so what the SDK would keep in its own event buses comes from the
 * executor instead: `tasks/cancel` cancels the execution (also one queued or awaiting approval
 * after a restart) and answers once it is recorded `cancelled`; `tasks/resubscribe` follows the
 * execution from the database's current state to its end, also after a restart or an approval.
 */
export function createA2aRequestHandler(options: A2aRequestHandlerOptions): DefaultRequestHandler {
  const card = agentCardFor({
    registry: options.registry,
    endpointUrl: "/a2a",
    apiKeysConfigured: options.apiKeysConfigured ?? false,
  });
  // The handler reads capabilities and interfaces from its card; the skills on it do not matter.
  card.skills = [];
  const taskStore =
    options.taskStore ??
    new ExecutionTaskStore({
      executor: options.executor,
      maxTasks: options.maxTasks,
      maxTaskBytes: options.maxTaskBytes,
      maxBytesPerTask: options.maxBytesPerTask,
    });
  return new SkillboxRequestHandler(card, taskStore, options.executor);
}

class SkillboxRequestHandler extends DefaultRequestHandler {
  constructor(
    card: ConstructorParameters<typeof DefaultRequestHandler>[0],
    private readonly tasks: TaskStore,
    private readonly executor: SkillExecutor,
  ) {
    super(
      card,
      tasks,
      new SkillAgentExecutor({ executor }),
      new DefaultExecutionEventBusManager(),
      undefined,
      undefined,
      undefined,
      undefined,
      // An execution waiting for approval goes on without this request: its bus must not outlive it.
      { keepBusAliveStates: [] },
    );
  }

  override async sendMessage(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): Promise<Message | Task> {
    if (params.message !== undefined) checkNewTask(params.message);
    return super.sendMessage(params, context);
  }

  override async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    if (params.message !== undefined) checkNewTask(params.message);
    let taskId: string | undefined;
    try {
      for await (const response of super.sendMessageStream(params, context)) {
        if (response.payload?.$case === "task") taskId ??= response.payload.value.id;
        yield response;
      }
    } finally {
      // A reader that left before the task settled leaves nobody folding its events into it.
      if (taskId !== undefined && this.tasks instanceof ExecutionTaskStore) this.tasks.release(taskId);
    }
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const task = await this.loadTask(params.id, context);
    if (task.status?.state === TaskState.TASK_STATE_CANCELED) return task;
    const executionId = task.metadata?.executionId;
    if (FINAL_TASK_STATES.has(task.status?.state) || typeof executionId !== "string") {
      throw new TaskNotCancelableError(`Task not cancelable: ${params.id}`);
    }
    const apiKeyId = ownerOfContext(context);
    let execution: SkillExecution;
    try {
      execution = await this.executor.cancel(executionId, { apiKeyId, reason: "A2A tasks/cancel" });
      if (!isFinalExecutionStatus(execution.status)) {
        // Running on another host: it carries the cancel out on its next look at the row.
        execution = await this.executor.wait(executionId, { apiKeyId, timeoutMs: CANCEL_WAIT_MS });
      }
    } catch (error) {
      if (!isSkillboxError(error)) throw error;
      if (error.code === "EXECUTION_NOT_FOUND") throw new TaskNotFoundError(`Task not found: ${params.id}`);
      if (error.code !== "EXECUTION_FINISHED" && error.code !== "WAIT_TIMEOUT") throw error;
      execution = (await this.executor.getExecution(executionId)) ?? (await Promise.reject(error));
    }
    if (execution.status !== "cancelled") {
      throw new TaskNotCancelableError(
        `Task not cancelable: ${params.id} (its execution is ${execution.status})`,
      );
    }
    // A store of the caller's own keeps the final state too; an ExecutionTaskStore reads it anyway.
    await this.tasks.save(executionToTask(execution), context);
    return (await this.tasks.load(params.id, context)) ?? executionToTask(execution);
  }

  override async *resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const task = await this.loadTask(params.id, context);
    if (FINAL_TASK_STATES.has(task.status?.state)) {
      throw new UnsupportedOperationError(
        `Task ${params.id} is in a terminal state (${task.status?.state}) and cannot be subscribed to; use tasks/get`,
      );
    }
    const executionId = task.metadata?.executionId;
    yield { payload: { $case: "task", value: task } };
    if (typeof executionId !== "string") return;
    for await (const update of executionTaskUpdates(this.executor, executionId, {
      owner: ownerOfContext(context),
      shown: task.status?.state,
    })) {
      yield update.kind === "statusUpdate"
        ? { payload: { $case: "statusUpdate", value: update.data } }
        : { payload: { $case: "artifactUpdate", value: update.data } };
    }
  }

  private async loadTask(id: string, context: ServerCallContext): Promise<Task> {
    const task = id === "" ? undefined : await this.tasks.load(id, context);
    if (task === undefined) throw new TaskNotFoundError(`Task not found: ${id}`);
    return task;
  }
}

function checkNewTask(message: Message): void {
  if (message.taskId !== "") {
    throw new RequestMalformedError(
      `Skillbox: task ${message.taskId} cannot take another message — each message runs one skill as a new ` +
        "task; send it without taskId (reuse the contextId to group related tasks)",
    );
  }
  readSkillCall(message);
}
