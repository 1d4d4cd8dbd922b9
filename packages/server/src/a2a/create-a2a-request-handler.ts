import type { Message, SendMessageRequest, StreamResponse, Task } from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import { DefaultRequestHandler, type ServerCallContext, type TaskStore } from "@a2a-js/sdk/server";
import type { SkillExecutor, SkillRegistry } from "@skillbox/core";
import { agentCardFor } from "./agent-card-for.js";
import { BoundedTaskStore } from "./bounded-task-store.js";
import { readSkillCall } from "./read-skill-call.js";
import { SkillAgentExecutor } from "./skill-agent-executor.js";

/** Options of {@link createA2aRequestHandler}. */
export interface A2aRequestHandlerOptions {
  registry: SkillRegistry;
  executor: SkillExecutor;
  /** Tasks kept for `tasks/get` (default 1000); see {@link BoundedTaskStore}. */
  maxTasks?: number;
  /** Serialised bytes all kept tasks hold together (default 64 MiB). */
  maxTaskBytes?: number;
  /** Serialised bytes one finished task keeps (default 1 MiB). */
  maxBytesPerTask?: number;
  /** The task store to use instead of a {@link BoundedTaskStore} with the limits above. */
  taskStore?: TaskStore;
  /** Whether callers authenticate with API keys (the card the handler holds says so). */
  apiKeysConfigured?: boolean;
}

/**
 * The SDK's `DefaultRequestHandler` over {@link SkillAgentExecutor} and a
 * {@link BoundedTaskStore}: what the A2A transports (`JsonRpcTransportHandler`,
 * `LegacyJsonRpcTransportHandler`, or the SDK's Express `jsonRpcHandler`) dispatch to. The
 * caller's owner id is the `userName` of the `ServerCallContext`'s user.
 *
 * Before anything runs, `message/send` is refused (JSON-RPC -32602) when the message continues
 * an existing task (a skill run takes one message; send a new one, with the same `contextId` to
 * group them) or does not say which skill to run with what input. Streaming is not offered.
 */
export function createA2aRequestHandler(options: A2aRequestHandlerOptions): DefaultRequestHandler {
  const card = agentCardFor({
    registry: options.registry,
    endpointUrl: "/a2a",
    apiKeysConfigured: options.apiKeysConfigured ?? false,
  });
  // The handler reads capabilities and interfaces from its card; the skills on it do not matter.
  card.skills = [];
  return new SkillboxRequestHandler(
    card,
    options.taskStore ??
      new BoundedTaskStore({
        maxTasks: options.maxTasks,
        maxTaskBytes: options.maxTaskBytes,
        maxBytesPerTask: options.maxBytesPerTask,
      }),
    new SkillAgentExecutor({ executor: options.executor }),
  );
}

class SkillboxRequestHandler extends DefaultRequestHandler {
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
    yield* super.sendMessageStream(params, context);
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
