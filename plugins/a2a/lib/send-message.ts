import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { SendMessageRequest, type Task, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { SkillboxError, type SkillContext } from "@skillbox/core/handler";
import type { A2aSettings } from "./a2a-settings.js";
import { answerToOutput } from "./answer-to-output.js";
import { checkAgentUrl, createGuardedFetch } from "./guarded-fetch.js";
import type { SendMessageInput, SendMessageOutput } from "./send-message-schemas.js";
import { toUpstreamError } from "./to-upstream-error.js";

/** States after which polling stops: final ones, and those waiting for the caller. */
const SETTLED_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);
const FIRST_POLL_MS = 100;
/** How long the best-effort `tasks/cancel` after an abort may take. */
const CANCEL_TIMEOUT_MS = 5000;

/**
 * Sends one message to the agent at `input.agentUrl` with the official A2A client (A2A 1.0, and
 * 0.3 agents through the SDK's compat layer; JSON-RPC or HTTP+JSON, whichever the card offers)
 * and returns its answer. A task that is not settled yet is polled with `tasks/get` until it is;
 * when the execution is cancelled or times out meanwhile, the task is cancelled (best effort).
 */
export async function sendMessage(
  input: SendMessageInput,
  settings: A2aSettings,
  context: SkillContext,
): Promise<SendMessageOutput> {
  if (input.text === undefined && input.data === undefined) {
    throw new SkillboxError("INPUT_INVALID", "a2a.send-message: send `text`, `data` or both");
  }
  const agentUrl = new URL(input.agentUrl);
  // Checked up front too, so the refusal names the URL as given rather than the card's URL.
  checkAgentUrl(agentUrl, settings);
  const fetchImpl = createGuardedFetch(settings, context);
  const legacyCompat = { enabled: true };
  const factory = new ClientFactory({
    transports: [
      new JsonRpcTransportFactory({ fetchImpl, legacyCompat }),
      new RestTransportFactory({ fetchImpl, legacyCompat }),
    ],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat }),
  });
  try {
    const client = await factory.createFromUrl(...cardLocation(agentUrl));
    const answer = await client.sendMessage(requestOf(input), { signal: context.signal });
    return answerToOutput(
      "status" in answer ? await untilSettled(client, answer, settings, context) : answer,
    );
  } catch (error) {
    throw toUpstreamError(error, input.agentUrl);
  }
}

/** `[baseUrl, path]` for `ClientFactory.createFromUrl`: a `.json` URL is the card itself. */
function cardLocation(agentUrl: URL): [string, string | undefined] {
  if (agentUrl.pathname.endsWith(".json")) return [agentUrl.href, ""];
  // The card path is resolved relative to the base, which must end with a slash to keep its path.
  return [agentUrl.href.endsWith("/") ? agentUrl.href : `${agentUrl.href}/`, undefined];
}

function requestOf(input: SendMessageInput): SendMessageRequest {
  const metadata = input.skill === undefined ? input.metadata : { ...input.metadata, skill: input.skill };
  return SendMessageRequest.fromJSON({
    message: {
      messageId: randomUUID(),
      role: "ROLE_USER",
      parts: [
        ...(input.text === undefined ? [] : [{ text: input.text }]),
        ...(input.data === undefined ? [] : [{ data: input.data }]),
      ],
      ...(metadata === undefined ? {} : { metadata }),
      ...(input.contextId === undefined ? {} : { contextId: input.contextId }),
    },
    configuration: {
      acceptedOutputModes: input.acceptedOutputModes ?? [],
      returnImmediately: input.returnImmediately ?? false,
    },
  });
}

async function untilSettled(
  client: Client,
  task: Task,
  settings: A2aSettings,
  context: SkillContext,
): Promise<Task> {
  let current = task;
  let delay = Math.min(FIRST_POLL_MS, settings.pollIntervalMs);
  try {
    while (current.status === undefined || !SETTLED_STATES.has(current.status.state)) {
      await sleep(delay, undefined, { signal: context.signal });
      current = await client.getTask(
        { tenant: "", id: task.id, historyLength: 0 },
        { signal: context.signal },
      );
      delay = Math.min(delay * 2, settings.pollIntervalMs);
    }
    return current;
  } catch (error) {
    if (context.signal.aborted) await cancelQuietly(client, task.id, context);
    throw error;
  }
}

/** Asks the agent to stop a task this execution no longer waits for; failures only get logged. */
async function cancelQuietly(client: Client, taskId: string, context: SkillContext): Promise<void> {
  try {
    await client.cancelTask(
      { tenant: "", id: taskId, metadata: undefined },
      { signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS) },
    );
  } catch (error) {
    context.logger.warn("a2a.send-message: cancelling the remote task failed", {
      taskId,
      error: error instanceof Error ? error.message : String(error),
    });
  }
}
