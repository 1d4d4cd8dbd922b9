import { describe, expect, it } from "vitest";
import { testSkill, useA2aTestServer } from "./a2a-test-server.js";

const startServer = useA2aTestServer();

async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/a2a`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  // biome-ignore lint/suspicious/noExplicitAny: the test reads fields of JSON-RPC answers.
  return { status: response.status, body: (await response.json()) as any };
}

/** Posts a streaming request and reads the whole event stream: each `data:` line's JSON. */
async function postStream(url: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/a2a`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  const text = await response.text();
  const events = text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    // biome-ignore lint/suspicious/noExplicitAny: the test reads fields of JSON-RPC answers.
    .map((line) => JSON.parse(line.slice("data: ".length)) as any);
  return { contentType: response.headers.get("content-type"), events };
}

describe("createHttpApp: A2A JSON-RPC endpoint", () => {
  it("answers a body that is not JSON with a parse error", async () => {
    const running = await startServer();

    const answer = await post(running.server.url, "{not json");

    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: "Invalid JSON payload." },
    });
  });

  it("answers another content type with content-type-not-supported", async () => {
    const running = await startServer();

    const answer = await post(running.server.url, "{}", { "content-type": "text/plain" });

    expect(answer.body.error.code).toBe(-32005);
  });

  it("answers the streaming methods with Server-Sent Events ending at the final state, in 1.0 and 0.3", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "echo" }));

    const v1 = await postStream(
      running.server.url,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendStreamingMessage",
        params: {
          message: {
            messageId: "m1",
            role: "ROLE_USER",
            parts: [{ data: { msg: "hi" } }],
            metadata: { skill: "echo" },
          },
        },
      }),
      { "A2A-Version": "1.0" },
    );
    const v03 = await postStream(
      running.server.url,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "message/stream",
        params: {
          message: {
            kind: "message",
            messageId: "m2",
            role: "user",
            parts: [{ kind: "data", data: { msg: "old" } }],
            metadata: { skill: "echo" },
          },
        },
      }),
    );

    expect(v1.contentType).toBe("text/event-stream");
    expect(v1.events.every((event) => event.id === 1)).toBe(true);
    expect(v1.events[0]?.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
    expect(v1.events.at(-1)?.result.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    const artifact = v1.events.find((event) => event.result.artifactUpdate !== undefined);
    expect(artifact?.result.artifactUpdate.artifact.parts[0].data).toEqual({ echoed: "hi" });
    expect(v03.contentType).toBe("text/event-stream");
    expect(v03.events.at(-1)?.result).toMatchObject({
      kind: "status-update",
      status: { state: "completed" },
    });
    expect(await running.host.executor.countExecutions()).toBe(2);
  });

  it("answers a streaming method refused before it starts with a plain JSON-RPC error", async () => {
    const running = await startServer();

    const answer = await post(
      running.server.url,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "SendStreamingMessage",
        params: { message: { messageId: "m3", role: "ROLE_USER", parts: [{ text: "hi" }] } },
      }),
      { "A2A-Version": "1.0" },
    );

    expect(answer.body).toMatchObject({ id: 3, error: { code: -32602 } });
    expect(await running.host.executor.countExecutions()).toBe(0);
  });

  it("answers a protocol version it does not speak with version-not-supported", async () => {
    const running = await startServer();

    const answer = await post(
      running.server.url,
      JSON.stringify({ jsonrpc: "2.0", id: 7, method: "GetTask", params: { id: "x" } }),
      { "A2A-Version": "2.0" },
    );

    expect(answer.body).toMatchObject({ id: 7, error: { code: -32009 } });
  });

  it("answers 401 in the API's error shape without an API key when the server has keys", async () => {
    const running = await startServer({ apiKeys: { "alice-key": "alice" } });

    const answer = await post(
      running.server.url,
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask" }),
    );

    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe("AUTH_REQUIRED");
  });
});
