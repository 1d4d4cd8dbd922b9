import { randomUUID } from "node:crypto";
import { type Message, TaskState } from "@a2a-js/sdk";
import { AgentEvent, type ExecutionEventBus } from "@a2a-js/sdk/server";
import { agentTextMessage } from "./execution-to-task.js";

type Metadata = Record<string, unknown>;

/**
 * Publishes the first events of one A2A task on the SDK's event bus: the task itself and a
 * status change (an execution's later ones come from `executionTaskUpdates`). The SDK's result
 * manager folds them into the stored task (status metadata is merged into the task's metadata)
 * and ends a waiting `message/send` at the first final or interrupted state.
 */
export class TaskEventPublisher {
  constructor(
    private readonly eventBus: ExecutionEventBus,
    private readonly taskId: string,
    private readonly contextId: string,
  ) {}

  /** The first event of every task: the task in state `submitted`, with the caller's message. */
  submitted(userMessage: Message, metadata: Metadata): void {
    this.eventBus.publish(
      AgentEvent.task({
        id: this.taskId,
        contextId: this.contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
        artifacts: [],
        history: [userMessage],
        metadata,
      }),
    );
  }

  /** A status change; `text` becomes an agent message explaining it (why it failed, …). */
  status(state: TaskState, options: { text?: string; metadata?: Metadata } = {}): void {
    const { taskId, contextId } = this;
    const message =
      options.text === undefined
        ? undefined
        : agentTextMessage({ messageId: randomUUID(), taskId, contextId, text: options.text });
    this.eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state, message, timestamp: now() },
        metadata: options.metadata,
      }),
    );
  }
}

function now(): string {
  return new Date().toISOString();
}
