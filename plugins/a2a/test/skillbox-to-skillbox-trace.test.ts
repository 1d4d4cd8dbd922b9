import { createHttpApp, type RunningHttpServer, startHttpServer } from "@skillbox/server";
import { installRecordingTelemetry, type RecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useSendMessageHost } from "./helpers/send-message-host.ts";

const makeHost = useSendMessageHost();
const remotes: { host: TemporaryHost; server: RunningHttpServer }[] = [];
let telemetry: RecordingTelemetry;

beforeAll(() => {
  telemetry = installRecordingTelemetry();
});
afterAll(() => telemetry.close());
afterEach(async () => {
  for (const remote of remotes.splice(0)) {
    await remote.server.close();
    await remote.host.dispose();
  }
});

/** Another Skillbox in this process, serving `echo` over A2A without API keys. */
async function startRemoteSkillbox() {
  const host = createTemporaryHost();
  const input = { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] };
  host.registry.register({ name: "echo", version: "1.0.0", input, handler: "echo", apiKeyId: "system" });
  host.executor.registerHandler("echo", (value: { msg: string }) => ({ echoed: value.msg }));
  const app = createHttpApp({ registry: host.registry, executor: host.executor });
  const server = await startHttpServer({ fetch: app.fetch, port: 0, apiKeysConfigured: false });
  remotes.push({ host, server });
  return { host, server };
}

describe("a2a.send-message against a traced Skillbox server", () => {
  it("runs the remote skill in the sender's trace, under the sender's attempt", async () => {
    const remote = await startRemoteSkillbox();
    const host = makeHost({ allowedHosts: [new URL(remote.server.url).host] });

    const execution = await host.executor.execute("a2a.send-message", {
      agentUrl: remote.server.url,
      skill: "echo",
      data: { msg: "traced" },
    });

    expect(execution.output).toMatchObject({ state: "completed", data: [{ echoed: "traced" }] });
    const remoteExecution = await remote.host.executor.getExecution(execution.output.metadata.executionId);
    expect(execution.traceId).not.toBeNull();
    expect(remoteExecution?.traceId).toBe(execution.traceId);
    // Walk up from the remote execution's span: the sender's attempt and execution are its ancestors.
    let span = telemetry
      .named("execute_tool echo")
      .find((candidate) => candidate.spanContext().spanId === remoteExecution?.spanId);
    const ancestors: string[] = [];
    while (span !== undefined) {
      ancestors.push(span.name);
      span = telemetry.parentOf(span);
    }
    expect(ancestors[0]).toBe("execute_tool echo");
    expect(ancestors.slice(-2)).toEqual(["attempt 1", "execute_tool a2a.send-message"]);
  });
});
