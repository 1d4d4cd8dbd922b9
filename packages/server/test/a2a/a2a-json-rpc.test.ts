import { describe, expect, it } from "vitest";
import { useA2aTestServer } from "./a2a-test-server.js";

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

  it("refuses streaming methods: the agent does not stream", async () => {
    const running = await startServer();
    const message = {
      messageId: "m1",
      role: "ROLE_USER",
      parts: [{ text: "hi" }],
      metadata: { skill: "echo" },
    };

    const v1 = await post(
      running.server.url,
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendStreamingMessage", params: { message } }),
      { "A2A-Version": "1.0" },
    );
    const v03 = await post(
      running.server.url,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "message/stream",
        params: {
          message: { kind: "message", messageId: "m2", role: "user", parts: [{ kind: "text", text: "hi" }] },
        },
      }),
    );

    expect(v1.body).toMatchObject({ id: 1, error: { code: -32004 } });
    expect(v03.body).toMatchObject({ id: 2, error: { code: -32004 } });
    expect(running.host.executor.countExecutions()).toBe(0);
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
