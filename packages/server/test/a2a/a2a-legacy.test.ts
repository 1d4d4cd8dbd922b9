import { type Task, TaskState } from "@a2a-js/sdk";
import { type ClientConfig, ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { parseLegacyAgentCard } from "@a2a-js/sdk/compat/v0_3/client";
import { describe, expect, it } from "vitest";
import { messageRequest, testSkill, useA2aTestServer } from "./a2a-test-server.js";

const startServer = useA2aTestServer();

/**
 * The SDK's client as an A2A 0.3 peer uses it: it reads the card a request without A2A-Version
 * gets, as a 0.3 client sees it (without the embedded 1.0 interfaces), and speaks 0.3 JSON-RPC.
 * `methods` collects the JSON-RPC method names it sent.
 */
async function legacyClient(url: string, methods: string[], config?: ClientConfig) {
  const response = await fetch(`${url}/.well-known/agent-card.json`);
  const { supportedInterfaces: _v1Interfaces, ...legacyCard } = (await response.json()) as Record<
    string,
    unknown
  >;
  const recordingFetch: typeof fetch = async (input, init) => {
    if (typeof init?.body === "string") methods.push(JSON.parse(init.body).method);
    return fetch(input, init);
  };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: recordingFetch, legacyCompat: { enabled: true } })],
    ...(config === undefined ? {} : { clientConfig: config }),
  });
  return factory.createFromAgentCard(parseLegacyAgentCard(legacyCard));
}

describe("createHttpApp: A2A 0.3 JSON-RPC", () => {
  it("answers message/send, tasks/get and tasks/cancel", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "echo" }));
    running.host.registry.register(testSkill({ name: "slow", handler: "slow", input: { type: "object" } }));
    const methods: string[] = [];
    const client = await legacyClient(running.server.url, methods);
    // A polling client sends `blocking: false`: the answer comes while the skill still runs.
    const pollingClient = await legacyClient(running.server.url, methods, { polling: true });

    const done = (await client.sendMessage(
      messageRequest([{ data: { msg: "old" } }], { skill: "echo" }),
    )) as Task;
    const fetched = await client.getTask({ tenant: "", id: done.id });
    const slow = (await pollingClient.sendMessage(messageRequest([{ data: {} }], { skill: "slow" }))) as Task;
    const cancelled = await client.cancelTask({ tenant: "", id: slow.id, metadata: undefined });

    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts[0]?.parts[0]?.content).toEqual({ $case: "data", value: { echoed: "old" } });
    expect(fetched.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(methods).toEqual(["message/send", "tasks/get", "message/send", "tasks/cancel"]);
  });
});
