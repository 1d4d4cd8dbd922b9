import { isDefinedSkill } from "@skillbox/core";
import { afterEach, describe, expect, it } from "vitest";
import sendMessageSkill from "../index.ts";
import { type SdkAgent, type SdkAgentOptions, startSdkAgent } from "./helpers/sdk-agent.ts";
import { manifest, useSendMessageHost } from "./helpers/send-message-host.ts";

const makeHost = useSendMessageHost();
const agents: SdkAgent[] = [];

afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
});

async function startAgent(options?: SdkAgentOptions): Promise<SdkAgent> {
  const agent = await startSdkAgent(options);
  agents.push(agent);
  return agent;
}

function allowed(agent: SdkAgent) {
  return { allowedHosts: [new URL(agent.url).host], pollIntervalMs: 20 };
}

describe("a2a.send-message", () => {
  it("default-exports a defined skill whose schemas match skill.json", () => {
    expect(isDefinedSkill(sendMessageSkill)).toBe(true);
    expect(sendMessageSkill.input).toMatchObject(manifest.input);
    expect(sendMessageSkill.output).toMatchObject(manifest.output);
  });

  it("returns the completed task's text, data and artifacts", async () => {
    const agent = await startAgent();
    const host = makeHost(allowed(agent));

    const execution = await host.executor.execute("a2a.send-message", {
      agentUrl: agent.url,
      text: "hello agent",
      data: { n: 1 },
    });

    expect(execution.status).toBe("success");
    expect(execution.output).toMatchObject({
      kind: "task",
      state: "completed",
      text: "HELLO AGENT",
      data: [{ n: 1 }],
      artifacts: [
        {
          artifactId: "answer",
          name: "answer",
          description: "the text, upper-cased",
          parts: [
            { kind: "text", text: "HELLO AGENT" },
            { kind: "data", data: { n: 1 } },
          ],
        },
      ],
      metadata: { agent: "uppercase" },
    });
    expect(execution.output.taskId).toEqual(expect.any(String));
    expect(execution.output.contextId).toEqual(expect.any(String));
  });

  it("returns a message answer as kind message", async () => {
    const agent = await startAgent();
    const host = makeHost(allowed(agent));

    const execution = await host.executor.execute("a2a.send-message", {
      agentUrl: agent.url,
      text: "message: hi",
    });

    expect(execution.output).toMatchObject({
      kind: "message",
      state: "completed",
      text: "HI",
      data: [],
      artifacts: [],
    });
  });

  it("takes the agent card's URL as agentUrl, and passes contextId on", async () => {
    const agent = await startAgent();
    const host = makeHost(allowed(agent));

    const execution = await host.executor.execute("a2a.send-message", {
      agentUrl: `${agent.url}/.well-known/agent-card.json`,
      text: "again",
      contextId: "conversation-1",
    });

    expect(execution.output).toMatchObject({
      state: "completed",
      text: "AGAIN",
      contextId: "conversation-1",
    });
  });

  it("talks to an A2A 0.3 agent through the SDK's compat layer", async () => {
    const agent = await startAgent({ protocolVersion: "0.3" });
    const host = makeHost(allowed(agent));

    const execution = await host.executor.execute("a2a.send-message", {
      agentUrl: agent.url,
      text: "old protocol",
    });

    expect(execution.output).toMatchObject({ kind: "task", state: "completed", text: "OLD PROTOCOL" });
  });

  it("with returnImmediately polls the task until it is final", async () => {
    const agent = await startAgent();
    const host = makeHost(allowed(agent));

    const execution = await host.executor.execute("a2a.send-message", {
      agentUrl: agent.url,
      text: "slow: done later",
      returnImmediately: true,
    });

    expect(execution.output).toMatchObject({ state: "completed", text: "SLOW: DONE LATER" });
    expect(agent.methods[0]).toBe("SendMessage");
    expect(agent.methods.slice(1).every((method) => method === "GetTask")).toBe(true);
    expect(agent.methods.length).toBeGreaterThan(1);
  });

  it("cancels the remote task when the execution is cancelled while it polls", async () => {
    const agent = await startAgent();
    const host = makeHost(allowed(agent));
    const controller = new AbortController();
    void agent.polled.then(() => controller.abort());

    const execution = await host.executor.execute(
      "a2a.send-message",
      { agentUrl: agent.url, text: "hang", returnImmediately: true },
      { signal: controller.signal },
    );

    expect(execution.status).toBe("cancelled");
    const taskId = await agent.polled;
    await expect.poll(() => agent.cancelled).toEqual([taskId]);
  });

  it("sends the configured headers to matching hosts only, and keeps them out of the audit trail", async () => {
    const agent = await startAgent();
    const host = makeHost({
      ...allowed(agent),
      headers: {
        [new URL(agent.url).host]: { Authorization: "Bearer remote-secret" },
        "elsewhere.example": { "X-Other": "1" },
      },
    });

    const execution = await host.executor.execute("a2a.send-message", {
      agentUrl: agent.url,
      text: "with auth",
    });

    expect(agent.authorizations).toEqual(["Bearer remote-secret"]);
    const stored = await host.executor.getExecution(execution.id);
    expect(JSON.stringify(stored)).not.toContain("remote-secret");
  });
});
