import { TaskState } from "@a2a-js/sdk";
import type { AgentExecutor, ExecutionEventBus, RequestContext, ServerCallContext } from "@a2a-js/sdk/server";
import {
  type CallerError,
  executionFailure,
  isSkillboxError,
  type SkillExecution,
  type SkillExecutor,
  toCallerError,
} from "@skillbox/core";
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
 * `blocking: false`) keeps running: its client has the task id and polls.
 */
export const CLIENT_SIGNAL_STATE_KEY = "skillbox.clientSignal";

/** The final A2A state of each execution status (`pending`/`running` never reach it). */
const STATE_BY_STATUS: Partial<Record<SkillExecution["status"], TaskState>> = {
  success: TaskState.TASK_STATE_COMPLETED,
  cancelled: TaskState.TASK_STATE_CANCELED,
  denied: TaskState.TASK_STATE_REJECTED,
};

/**
 * The A2A SDK's `AgentExecutor` over Skillbox: every message runs one skill (see
 * {@link readSkillCall} for how the message names it) as
 * `executor.execute(reference, input, { apiKeyId: owner, sessionId: contextId, signal })`.
 *
 * The task goes `submitted` → `working` → `completed` (the output as an artifact with one data
 * part; `metadata` carries `executionId`, `skill`, `skillVersion`, `executionStatus`), `failed`
 * (a text message `CODE: message` and `metadata.error` `{ code, message, data? }` — core's
 * `toCallerError` view, no stack — e.g. `data.cause.code` of a `HANDLER_ERROR`: the skill is
 * unknown or disabled, its input invalid, the handler threw, it timed out), `rejected` (an
 * interceptor denied it) or `canceled`: `tasks/cancel` aborts the execution's signal, and the
 * execution is recorded `cancelled`. A blocking `message/send` whose client goes away is cancelled
 * too (see {@link CLIENT_SIGNAL_STATE_KEY}).
 */
export class SkillAgentExecutor implements AgentExecutor {
  private readonly executor: SkillExecutor;
  private readonly ownerOf: (context: ServerCallContext) => string;
  /** The abort controller of each task whose skill is running, by task id. */
  private readonly running = new Map<string, AbortController>();

  constructor(options: SkillAgentExecutorOptions) {
    this.executor = options.executor;
    this.ownerOf = options.ownerOf ?? ((context) => context.user?.userName || "public");
  }

  execute = async (requestContext: RequestContext, eventBus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, userMessage } = requestContext;
    const publisher = new TaskEventPublisher(eventBus, taskId, contextId);
    // Registered before the first await, so a tasks/cancel arriving at any point finds it.
    const controller = new AbortController();
    this.running.set(taskId, controller);
    const stopFollowingClient = followClient(requestContext, controller);
    try {
      let call: SkillCall;
      try {
        call = readSkillCall(userMessage);
      } catch (error) {
        publisher.submitted(userMessage, {});
        publisher.status(
          TaskState.TASK_STATE_FAILED,
          failure({ code: "REQUEST_INVALID", message: (error as Error).message }),
        );
        return;
      }
      publisher.submitted(userMessage, { skill: call.reference });
      publisher.status(TaskState.TASK_STATE_WORKING);
      await this.run(call, requestContext, controller.signal, publisher);
    } finally {
      stopFollowingClient();
      this.running.delete(taskId);
    }
  };

  cancelTask = async (taskId: string, _eventBus: ExecutionEventBus): Promise<void> => {
    // execute() publishes `canceled` once the executor has recorded the execution `cancelled`.
    // Without an entry the execution has just ended: its final state is on the bus already and
    // the SDK ends the bus when execute() returns, which ends the cancel request too.
    this.running.get(taskId)?.abort();
  };

  private async run(
    call: SkillCall,
    requestContext: RequestContext,
    signal: AbortSignal,
    publisher: TaskEventPublisher,
  ): Promise<void> {
    let execution: SkillExecution;
    try {
      execution = await this.executor.execute(call.reference, call.input, {
        apiKeyId: this.ownerOf(requestContext.context),
        sessionId: requestContext.contextId,
        signal,
      });
    } catch (error) {
      // Nothing ran: the skill is unknown, invisible or disabled, or the executor is closed.
      if (!isSkillboxError(error)) console.error("skillbox a2a: executing a skill failed", error);
      const { code, message } = isSkillboxError(error)
        ? error
        : { code: "INTERNAL_ERROR", message: "The server failed to run the skill; its log has the details" };
      publisher.status(TaskState.TASK_STATE_FAILED, failure({ code, message }));
      return;
    }
    const metadata = {
      executionId: execution.id,
      skill: execution.skillName,
      skillVersion: execution.skillVersion,
      executionStatus: execution.status,
    };
    // `execute()` resolves with a final record: no failure is `success`.
    const error = executionFailure(execution);
    if (error === undefined) {
      publisher.output(
        execution.id,
        execution.output,
        `Output of ${execution.skillName}@${execution.skillVersion}`,
      );
      publisher.status(TaskState.TASK_STATE_COMPLETED, { metadata });
      return;
    }
    const state = STATE_BY_STATUS[execution.status] ?? TaskState.TASK_STATE_FAILED;
    const explained = failure(error, `${execution.skillName}@${execution.skillVersion}`);
    publisher.status(state, { text: explained.text, metadata: { ...metadata, ...explained.metadata } });
  }
}

/** Aborts `controller` when a blocking request's client goes away; returns the unsubscribe. */
function followClient(requestContext: RequestContext, controller: AbortController): () => void {
  const signal = requestContext.context?.state.get(CLIENT_SIGNAL_STATE_KEY);
  if (!(signal instanceof AbortSignal) || requestContext.request.configuration?.returnImmediately === true) {
    return () => {};
  }
  const abort = () => controller.abort(signal.reason);
  if (signal.aborted) {
    abort();
    return () => {};
  }
  // The signal may belong to a keep-alive connection serving many requests: never leave a listener.
  signal.addEventListener("abort", abort, { once: true });
  return () => signal.removeEventListener("abort", abort);
}

/**
 * The explanation of a failed task: text `CODE: message`, and the error's caller view as metadata.
 * `skill` (`name@version`) is named in the caller view of a host configuration error.
 */
function failure(error: CallerError, skill?: string): { text: string; metadata: Record<string, unknown> } {
  const view = toCallerError(error, skill === undefined ? {} : { skill });
  return { text: `${view.code}: ${view.message}`, metadata: { error: view } };
}
