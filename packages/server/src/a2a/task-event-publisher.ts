import { randomUUID } from "node:crypto";
import { type Message, type Part, Role, TaskState } from "@a2a-js/sdk";
import { AgentEvent, type ExecutionEventBus } from "@a2a-js/sdk/server";

type Metadata = Record<string, unknown>;

/**
 * Publishes the events of one A2A task on the SDK's event bus: the task itself, its status
 * changes and its output artifact. The SDK's result manager folds them into the stored task
 * (status metadata is merged into the task's metadata) and ends a waiting `message/send` at the
 * first final state.
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
    this.eventBus.publish(
      AgentEvent.statusUpdate({
        taskId: this.taskId,
        contextId: this.contextId,
        status: {
          state,
          message: options.text === undefined ? undefined : this.agentMessage(options.text),
          timestamp: now(),
        },
        metadata: options.metadata,
      }),
    );
  }

  /** The skill's output as one artifact holding one data part. */
  output(executionId: string, output: unknown, description: string): void {
    this.eventBus.publish(
      AgentEvent.artifactUpdate({
        taskId: this.taskId,
        contextId: this.contextId,
        artifact: {
          artifactId: executionId,
          name: "output",
          description,
          parts: [
            {
              content: { $case: "data", value: output },
              metadata: undefined,
              filename: "",
              mediaType: "application/json",
            },
          ],
          metadata: { executionId },
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
  }

  private agentMessage(text: string): Message {
    const part: Part = {
      content: { $case: "text", value: text },
      metadata: undefined,
      filename: "",
      mediaType: "text/plain",
    };
    return {
      messageId: randomUUID(),
      contextId: this.contextId,
      taskId: this.taskId,
      role: Role.ROLE_AGENT,
      parts: [part],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
  }
}

function now(): string {
  return new Date().toISOString();
}
