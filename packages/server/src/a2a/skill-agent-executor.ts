import { TaskState } from "@a2a-js/sdk";
import type { AgentExecutor, ExecutionEventBus, RequestContext, ServerCallContext } from "@a2a-js/sdk/server";
import { type CallerError, isSkillboxError, type SkillExecutor, toCallerError } from "@skillbox/core";
import { executionTaskUpdates } from "./execution-task-updates.js";
import { taskMetadataOf } from "./execution-to-task.js";
import { ownerOfContext } from "./owner-user.js";
import { readSkillCall, type SkillCall } from "./read-skill-call.js";
import { TaskEventPublisher } from "./task-event-publisher.js";

/** Options of {@link SkillAgentExecutor}. */
export interface SkillAgentExecutorOptions {
  executor: SkillExecutor;
  /**
   * The owner id a request runs skills as. Default: the SDK user's `userName`, or `public` when
   * it has none (the SDK's unauthenticated user).
   */
  ownerOf?: (context: ServerCallContext) => string;
}

/**
 * The `ServerCallContext.state` entry holding an `AbortSignal` aborted when the client of the
 * request goes away. A blocking `message/send` whose client leaves is cancelled with it — that
 * client never learned the task id, so nobody could cancel it or read its result — as the HTTP
 * API and MCP cancel their executions. A non-blocking one (`returnImmediately`, or 0.3's
 * `blocking: false`) keeps running: its client has the task id and polls. So does a stream,
 * whose first event told its client the task id (the routes give streams no such signal).
 */
export const CLIENT_SIGNAL_STATE_KEY = "skillbox.clientSignal";

/**
 * The A2A SDK's `AgentExecutor` over Skillbox: every message runs one skill (see
 * {@link readSkillCall} for how the message names it) as a durable execution,
 * `executor.submit(reference, input, { apiKeyId: owner, sessionId: contextId })`, and the task
 * is that execution: the task id is the execution id, so `tasks/get` finds it in the database
 * after a restart (see `ExecutionTaskStore`).
 *
 * The task goes `submitted` (queued) → `working` (running; every `ctx.progress()` report is a
 * `status-update` with `metadata.progress` and its message) → `completed` (the output as an
 * artifact with one data part; `metadata` carries `executionId`, `skill`, `skillVersion`,
 * `executionStatus`), `failed` (a text message `CODE: message` and `metadata.error`
 * `{ code, message, data? }` — core's `toCallerError` view, no stack — e.g. `data.cause.code` of
 * a `HANDLER_ERROR`), `rejected` (an interceptor denied it, or its approver rejected it) or
 * `canceled`. A skill that needs approval stops at `input-required` (`metadata.approval` says
 * why; a person approves over the HTTP API or the CLI) and goes on in the background once
 * approved. A message naming an unknown or disabled skill fails at once, and no execution backs
 * its task. A blocking `message/send` whose client goes away is cancelled (see
 * {@link CLIENT_SIGNAL_STATE_KEY}).
 */
export class SkillAgentExecutor implements AgentExecutor {
  private readonly executor: SkillExecutor;
  private readonly ownerOf: (context: ServerCallContext) => string;

  constructor(options: SkillAgentExecutorOptions) {
    this.executor = options.executor;
    this.ownerOf = options.ownerOf ?? ownerOfContext;
  }

  execute = async (requestContext: RequestContext, eventBus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, userMessage } = requestContext;
    let call: SkillCall;
    try {
      call = readSkillCall(userMessage);
    } catch (error) {
      const publisher = new TaskEventPublisher(eventBus, taskId, contextId);
      publisher.submitted(userMessage, {});
      publisher.status(
        TaskState.TASK_STATE_FAILED,
        failure({ code: "REQUEST_INVALID", message: (error as Error).message }),
      );
      return;
    }
    const owner = this.ownerOf(requestContext.context);
    let id: string;
    try {
      id = await this.submit(call, owner, contextId);
    } catch (error) {
      // Nothing was recorded: the skill is unknown, invisible or disabled, or the executor is closed.
      if (!isSkillboxError(error)) console.error("skillbox a2a: submitting a skill failed", error);
      const { code, message } = isSkillboxError(error)
        ? error
        : { code: "INTERNAL_ERROR", message: "The server failed to run the skill; its log has the details" };
      const publisher = new TaskEventPublisher(eventBus, taskId, contextId);
      publisher.submitted(userMessage, { skill: call.reference });
      publisher.status(TaskState.TASK_STATE_FAILED, failure({ code, message }));
      return;
    }
    const stopFollowingClient = followClient(requestContext, () => {
      this.executor
        .cancel(id, { apiKeyId: owner, reason: "The A2A client of a blocking message/send went away" })
        .catch(() => {
          // Already final: nothing left to cancel.
        });
    });
    try {
      const submitted = await this.executor.getExecution(id);
      const publisher = new TaskEventPublisher(eventBus, id, contextId);
      publisher.submitted(
        { ...userMessage, taskId: id },
        submitted === undefined ? { executionId: id } : taskMetadataOf(submitted),
      );
      for await (const update of executionTaskUpdates(this.executor, id, {
        owner,
        shown: TaskState.TASK_STATE_SUBMITTED,
      })) {
        eventBus.publish(update);
      }
    } finally {
      stopFollowingClient();
    }
  };

  /**
   * Submits the call. An input `submit` refuses outright (nested deeper than the executor's
   * `maxNestingDepth`) runs through `execute()` instead, which records the refusal as it does
   * for every front: the task is then that failed execution.
   */
  private async submit(call: SkillCall, owner: string, contextId: string): Promise<string> {
    const options = { apiKeyId: owner, sessionId: contextId };
    try {
      return await this.executor.submit(call.reference, call.input, options);
    } catch (error) {
      if (!isSkillboxError(error) || error.code !== "INPUT_INVALID") throw error;
      return (await this.executor.execute(call.reference, call.input, options)).id;
    }
  }

  /**
   * Cancels the execution behind `taskId` (the SDK checked the caller owns the task). The task
   * ends `canceled` once the execution is recorded `cancelled`.
   */
  cancelTask = async (taskId: string, _eventBus: ExecutionEventBus): Promise<void> => {
    await this.executor.cancel(taskId, { reason: "A2A tasks/cancel" }).catch((error: unknown) => {
      // A finished execution has its final state on the bus already.
      if (!isSkillboxError(error) || error.code !== "EXECUTION_FINISHED") throw error;
    });
  };
}

/** Calls `cancel` when a blocking request's client goes away; returns the unsubscribe. */
function followClient(requestContext: RequestContext, cancel: () => void): () => void {
  const signal = requestContext.context?.state.get(CLIENT_SIGNAL_STATE_KEY);
  if (!(signal instanceof AbortSignal) || requestContext.request.configuration?.returnImmediately === true) {
    return () => {};
  }
  if (signal.aborted) {
    cancel();
    return () => {};
  }
  // The signal may belong to a keep-alive connection serving many requests: never leave a listener.
  signal.addEventListener("abort", cancel, { once: true });
  return () => signal.removeEventListener("abort", cancel);
}

/** The explanation of a failed task: text `CODE: message`, and the error's caller view as metadata. */
function failure(error: CallerError): { text: string; metadata: Record<string, unknown> } {
  const view = toCallerError(error);
  return { text: `${view.code}: ${view.message}`, metadata: { error: view } };
}
