import { expectTraceparentOf, useRecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { afterEach, describe, expect, it } from "vitest";
import { type SdkAgent, startSdkAgent } from "./helpers/sdk-agent.ts";
import { useSendMessageHost } from "./helpers/send-message-host.ts";

const makeHost = useSendMessageHost();
const agents: SdkAgent[] = [];

afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
});

async function startAgent(): Promise<SdkAgent> {
  const agent = await startSdkAgent();
  agents.push(agent);
  return agent;
}

function hostFor(agent: SdkAgent) {
  return makeHost({ allowedHosts: [new URL(agent.url).host], pollIntervalMs: 20 });
}

// First, while no SDK is installed: the file installs it once, below, and never removes it early.
describe("a2a.send-message without an OpenTelemetry SDK", () => {
  it("sends no trace headers", async () => {
    const agent = await startAgent();
    const execution = await hostFor(agent).executor.execute("a2a.send-message", {
      agentUrl: agent.url,
      text: "untraced",
    });
    expect(execution.status).toBe("success");
    expect(execution.traceId).toBeNull();
    expect(agent.requests.length).toBeGreaterThan(1);
    for (const { headers } of agent.requests) expect(headers.traceparent).toBeUndefined();
  });
});

describe("a2a.send-message with an OpenTelemetry SDK", () => {
  const telemetry = useRecordingTelemetry();

  it("sends the execution's traceparent on the card request and every JSON-RPC call", async () => {
    const agent = await startAgent();
    const execution = await hostFor(agent).executor.execute("a2a.send-message", {
      agentUrl: agent.url,
      text: "slow: traced",
      returnImmediately: true,
    });
    expect(execution.output).toMatchObject({ state: "completed", text: "SLOW: TRACED" });
    expect(agent.methods[0]).toBe("SendMessage");
    expect(agent.methods).toContain("GetTask");
    expect(agent.requests.map(({ path }) => path)).toEqual([
      "/.well-known/agent-card.json",
      ...agent.methods.map(() => "/a2a/jsonrpc"),
    ]);
    for (const { headers } of agent.requests) {
      const chain = expectTraceparentOf(telemetry, execution, headers.traceparent);
      expect(chain).toEqual(["attempt 1", "execute_tool a2a.send-message"]);
    }
  });
});
