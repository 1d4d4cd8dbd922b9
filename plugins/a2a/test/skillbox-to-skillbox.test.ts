import { createHttpApp, type RunningHttpServer, startHttpServer } from "@skillbox/server";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import { useSendMessageHost } from "./helpers/send-message-host.ts";

const makeHost = useSendMessageHost();
const remotes: { host: TemporaryHost; server: RunningHttpServer }[] = [];

afterEach(async () => {
  for (const remote of remotes.splice(0)) {
    await remote.server.close();
    await remote.host.dispose();
  }
});

/** Another Skillbox, serving its `echo` and `broken` skills over A2A behind the API key `remote-key`. */
async function startRemoteSkillbox() {
  const host = createTemporaryHost();
  const input = { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] };
  host.registry.register({ name: "echo", version: "1.0.0", input, handler: "echo", apiKeyId: "system" });
  host.registry.register({ name: "broken", version: "1.0.0", input, handler: "broken", apiKeyId: "system" });
  host.executor.registerHandler("echo", (value: { msg: string }) => ({ echoed: value.msg }));
  host.executor.registerHandler("broken", () => {
    throw new Error("remote skill failed");
  });
  const app = createHttpApp({
    registry: host.registry,
    executor: host.executor,
    apiKeys: { "remote-key": "caller" },
  });
  const server = await startHttpServer({ fetch: app.fetch, port: 0, apiKeysConfigured: true });
  remotes.push({ host, server });
  return { host, server };
}

/**
 * Sends `data` to `skill` of a fresh remote Skillbox through `a2a.send-message`, with the remote's
 * API key configured for its host unless `authorized` is false.
 */
async function sendToRemote(skill: string, data: Record<string, unknown>, { authorized = true } = {}) {
  const remote = await startRemoteSkillbox();
  const remoteHost = new URL(remote.server.url).host;
  const credentials = authorized ? { headers: { [remoteHost]: { Authorization: "Bearer remote-key" } } } : {};
  const host = makeHost({ allowedHosts: [remoteHost], ...credentials });
  const execution = await host.executor.execute("a2a.send-message", {
    agentUrl: remote.server.url,
    skill,
    data,
  });
  return { remote, execution };
}

describe("a2a.send-message against a Skillbox server", () => {
  it("runs a skill of the other Skillbox and returns its output as data", async () => {
    const { remote, execution } = await sendToRemote("echo", { msg: "across" });

    expect(execution.status).toBe("success");
    expect(execution.output).toMatchObject({
      kind: "task",
      state: "completed",
      text: "",
      data: [{ echoed: "across" }],
      metadata: { skill: "echo", skillVersion: "1.0.0", executionStatus: "success" },
    });
    const remoteExecution = await remote.host.executor.getExecution(execution.output.metadata.executionId);
    expect(remoteExecution).toMatchObject({
      apiKeyId: "caller",
      sessionId: execution.output.contextId,
      status: "success",
    });
  });

  it("returns the failed state and the remote error as text", async () => {
    const { execution } = await sendToRemote("broken", { msg: "x" });

    expect(execution.status).toBe("success");
    expect(execution.output).toMatchObject({
      state: "failed",
      metadata: { error: { code: "HANDLER_ERROR" } },
    });
    expect(execution.output.text).toMatch(/^HANDLER_ERROR: .*remote skill failed/);
    expect(execution.output.statusMessage).toBe(execution.output.text);
  });

  it("fails with UPSTREAM_ERROR naming the credentials setting when the key is missing", async () => {
    const { execution } = await sendToRemote("echo", { msg: "x" }, { authorized: false });

    expect(execution.error).toMatchObject({ code: "UPSTREAM_ERROR", data: { status: 401 } });
    expect(execution.error?.message).toContain("SKILLBOX_A2A_HEADERS");
  });
});
