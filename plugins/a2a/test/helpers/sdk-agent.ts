import type { IncomingHttpHeaders, Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type AgentCard, type Message, type Part, Role, TaskState } from "@a2a-js/sdk";
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
} from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import express from "express";

/** A remote A2A agent built from the SDK's server pieces on Express, listening on 127.0.0.1. */
export interface SdkAgent {
  /** Base URL, such as `http://127.0.0.1:41234`. */
  url: string;
  /** The `Authorization` header of every JSON-RPC request, in order. */
  authorizations: (string | undefined)[];
  /** The JSON-RPC method of every request, in order. */
  methods: string[];
  /** Every request the agent received (the card's too), in order. */
  requests: { path: string; headers: IncomingHttpHeaders }[];
  /** Ids of the tasks `tasks/cancel` reached. */
  cancelled: string[];
  /** Resolves with the task id when a client first polls a task (`GetTask` / `tasks/get`). */
  polled: Promise<string>;
  close(): Promise<void>;
}

/** How the agent answers and which protocol version it declares. */
export interface SdkAgentOptions {
  /** `0.3` declares a v0.3 JSON-RPC interface only and serves it through the SDK's compat layer. */
  protocolVersion?: "1.0" | "0.3";
  /** Rewrites the card the agent serves (to point its interface elsewhere, …). */
  card?: (card: AgentCard) => AgentCard;
  /** Extra Express routes, mounted before the A2A ones. */
  routes?: (app: express.Express) => void;
}

function textPart(text: string): Part {
  return {
    content: { $case: "text", value: text },
    metadata: undefined,
    filename: "",
    mediaType: "text/plain",
  };
}

/**
 * The agent's behaviour, chosen by the message's text:
 * - `message: …` answers with a message (no task) holding the rest upper-cased;
 * - `hang` starts a task that runs until cancelled;
 * - `slow: …` completes after a short while, so a client that does not wait has to poll;
 * - anything else completes a task whose artifact holds the upper-cased text and the data parts
 *   it received.
 */
class UppercaseExecutor implements AgentExecutor {
  private readonly waiting = new Map<string, () => void>();
  constructor(private readonly agent: SdkAgent) {}

  execute = async (requestContext: RequestContext, eventBus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, userMessage } = requestContext;
    const text = userMessage.parts
      .flatMap((part) => (part.content?.$case === "text" ? [part.content.value] : []))
      .join(" ");
    if (text.startsWith("message: ")) {
      eventBus.publish(
        AgentEvent.message(agentMessage(contextId, "", [textPart(text.slice(9).toUpperCase())])),
      );
      return;
    }
    const status = (state: TaskState) => ({ state, message: undefined, timestamp: new Date().toISOString() });
    eventBus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: status(TaskState.TASK_STATE_WORKING),
        artifacts: [],
        history: [userMessage],
        metadata: { agent: "uppercase" },
      }),
    );
    if (text === "hang") {
      await new Promise<void>((resolve) => this.waiting.set(taskId, resolve));
      eventBus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: status(TaskState.TASK_STATE_CANCELED),
          metadata: undefined,
        }),
      );
      return;
    }
    if (text.startsWith("slow: ")) await new Promise((resolve) => setTimeout(resolve, 300));
    const data = userMessage.parts.filter((part) => part.content?.$case === "data");
    eventBus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: "answer",
          name: "answer",
          description: "the text, upper-cased",
          parts: [textPart(text.toUpperCase()), ...data],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(TaskState.TASK_STATE_COMPLETED),
        metadata: undefined,
      }),
    );
  };

  cancelTask = async (taskId: string): Promise<void> => {
    this.agent.cancelled.push(taskId);
    this.waiting.get(taskId)?.();
  };
}

function agentMessage(contextId: string, taskId: string, parts: Part[]): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** Starts the agent on 127.0.0.1 with a free port. */
export async function startSdkAgent(options: SdkAgentOptions = {}): Promise<SdkAgent> {
  const app = express();
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let markPolled!: (taskId: string) => void;
  const agent: SdkAgent = {
    url,
    authorizations: [],
    methods: [],
    requests: [],
    cancelled: [],
    polled: new Promise((resolve) => {
      markPolled = resolve;
    }),
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
  const version = options.protocolVersion ?? "1.0";
  const baseCard: AgentCard = {
    name: "Uppercase agent",
    description: "Answers with the text upper-cased",
    supportedInterfaces: [
      { url: `${url}/a2a/jsonrpc`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: version },
    ],
    provider: undefined,
    version: "1.0.0",
    capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain", "application/json"],
    skills: [],
    signatures: [],
  };
  const card = options.card?.(baseCard) ?? baseCard;
  const requestHandler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    new UppercaseExecutor(agent),
  );
  const legacyCompat = { enabled: version === "0.3" };
  app.use((request, _response, next) => {
    agent.requests.push({ path: request.originalUrl, headers: request.headers });
    next();
  });
  options.routes?.(app);
  app.use(
    "/.well-known/agent-card.json",
    agentCardHandler({ agentCardProvider: requestHandler, legacyCompat }),
  );
  // The SDK's handler parses the body too; express.json() skips a body already parsed.
  app.use("/a2a/jsonrpc", express.json(), (request, _response, next) => {
    agent.authorizations.push(request.headers.authorization);
    const { method, params } = request.body as { method: string; params?: { id?: string } };
    agent.methods.push(method);
    if (method === "GetTask" || method === "tasks/get") markPolled(params?.id ?? "");
    next();
  });
  app.use(
    "/a2a/jsonrpc",
    jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication, legacyCompat }),
  );
  return agent;
}
