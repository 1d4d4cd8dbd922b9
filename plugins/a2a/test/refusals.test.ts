import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type SdkAgent, type SdkAgentOptions, startSdkAgent } from "./helpers/sdk-agent.ts";
import { useSendMessageHost } from "./helpers/send-message-host.ts";

const makeHost = useSendMessageHost();
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function startAgent(options?: SdkAgentOptions): Promise<SdkAgent> {
  const agent = await startSdkAgent(options);
  closers.push(() => agent.close());
  return agent;
}

/** A plain HTTP server on 127.0.0.1 answering every request with `answer`. */
async function startRawServer(
  answer: (response: import("node:http").ServerResponse) => void,
): Promise<string> {
  const server: Server = createServer((_request, response) => answer(response));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("a2a.send-message refusals", () => {
  it("refuses every agent with URL_REFUSED naming SKILLBOX_A2A_ALLOWED_HOSTS when no host is allowed", async () => {
    const agent = await startAgent();
    const host = makeHost({});

    const execution = await host.executor.execute("a2a.send-message", { agentUrl: agent.url, text: "hi" });

    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain("SKILLBOX_A2A_ALLOWED_HOSTS");
    expect(agent.methods).toEqual([]);
  });

  it("refuses a host outside the allowlist, and a port other than the allowed one", async () => {
    const agent = await startAgent();
    const host = makeHost({ allowedHosts: ["agents.example.com", "127.0.0.1:1"] });

    const execution = await host.executor.execute("a2a.send-message", { agentUrl: agent.url, text: "hi" });

    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain(
      `${new URL(agent.url).host} is not in SKILLBOX_A2A_ALLOWED_HOSTS`,
    );
  });

  it("refuses a scheme other than http(s)", async () => {
    const host = makeHost({ allowedHosts: ["*"] });

    const execution = await host.executor.execute("a2a.send-message", {
      agentUrl: "file:///etc/passwd",
      text: "hi",
    });

    expect(execution.error?.code).toBe("URL_REFUSED");
  });

  it("refuses an endpoint the agent card puts on a host outside the allowlist", async () => {
    const agent = await startAgent({
      card: (card) => ({
        ...card,
        supportedInterfaces: card.supportedInterfaces.map((entry) => ({
          ...entry,
          url: entry.url.replace("127.0.0.1", "localhost"),
        })),
      }),
    });
    const host = makeHost({ allowedHosts: [new URL(agent.url).host] });

    const execution = await host.executor.execute("a2a.send-message", { agentUrl: agent.url, text: "hi" });

    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain("localhost");
    expect(agent.methods).toEqual([]);
  });

  it("does not follow a redirect (it could leave the allowlist)", async () => {
    const url = await startRawServer((response) => {
      response.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" }).end();
    });
    const host = makeHost({ allowedHosts: [new URL(url).host] });

    const execution = await host.executor.execute("a2a.send-message", { agentUrl: url, text: "hi" });

    expect(execution.error?.code).toBe("UPSTREAM_ERROR");
    expect(execution.error?.message).toContain("redirects are not followed");
  });

  it("answers UPSTREAM_ERROR with the status when the agent answers an HTTP error", async () => {
    const agent = await startAgent({
      card: (card) => ({
        ...card,
        supportedInterfaces: card.supportedInterfaces.map((entry) => ({
          ...entry,
          url: entry.url.replace("/a2a/jsonrpc", "/broken"),
        })),
      }),
      routes: (app) => app.post("/broken", (_request, response) => response.status(503).send("overloaded")),
    });
    const host = makeHost({ allowedHosts: [new URL(agent.url).host] });

    const execution = await host.executor.execute("a2a.send-message", { agentUrl: agent.url, text: "hi" });

    expect(execution.error).toMatchObject({ code: "UPSTREAM_ERROR", data: { status: 503 } });
    expect(execution.error?.message).toContain("HTTP 503");
  });

  it("answers UPSTREAM_ERROR when the agent answers a JSON-RPC error", async () => {
    const url = await startRawServer((response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({ jsonrpc: "2.0", id: 1, error: { code: -32603, message: "agent exploded" } }),
      );
    });
    const card = {
      name: "x",
      description: "x",
      version: "1",
      supportedInterfaces: [{ url, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
      capabilities: {},
      defaultInputModes: [],
      defaultOutputModes: [],
      skills: [],
    };
    const cardUrl = await startRawServer((response) => {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(card));
    });
    const host = makeHost({ allowedHosts: [new URL(url).host, new URL(cardUrl).host] });

    const execution = await host.executor.execute("a2a.send-message", { agentUrl: cardUrl, text: "hi" });

    expect(execution.error).toMatchObject({ code: "UPSTREAM_ERROR", data: { code: -32603 } });
    expect(execution.error?.message).toContain("agent exploded");
  });

  it("answers UPSTREAM_ERROR for a missing agent card and for an agent that is not running", async () => {
    const url = await startRawServer((response) => response.writeHead(404).end());
    const closed = await startRawServer((response) => response.end());
    await closers.pop()?.();
    const host = makeHost({ allowedHosts: [new URL(url).host, new URL(closed).host] });

    const missing = await host.executor.execute("a2a.send-message", { agentUrl: url, text: "hi" });
    const down = await host.executor.execute("a2a.send-message", { agentUrl: closed, text: "hi" });

    expect(missing.error).toMatchObject({ code: "UPSTREAM_ERROR", data: { status: 404 } });
    expect(down.error).toMatchObject({ code: "UPSTREAM_ERROR", data: { reason: "ECONNREFUSED" } });
  });

  it("stops reading an answer larger than maxResponseBytes with SIZE_LIMIT_EXCEEDED", async () => {
    const agent = await startAgent();
    const host = makeHost({ allowedHosts: [new URL(agent.url).host], maxResponseBytes: 200 });

    const execution = await host.executor.execute("a2a.send-message", { agentUrl: agent.url, text: "hi" });

    expect(execution.error?.code).toBe("SIZE_LIMIT_EXCEEDED");
    expect(execution.error?.message).toContain("SKILLBOX_A2A_MAX_RESPONSE_BYTES");
  });

  it("also stops a chunked answer without Content-Length once it passes maxResponseBytes", async () => {
    const url = await startRawServer((response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write(`{"name": "${"x".repeat(300)}`);
      response.end(`${"y".repeat(300)}"}`);
    });
    const host = makeHost({ allowedHosts: [new URL(url).host], maxResponseBytes: 200 });

    const execution = await host.executor.execute("a2a.send-message", { agentUrl: url, text: "hi" });

    expect(execution.error?.code).toBe("SIZE_LIMIT_EXCEEDED");
  });

  it("needs text or data (INPUT_INVALID)", async () => {
    const host = makeHost({ allowedHosts: ["*"] });

    const execution = await host.executor.execute("a2a.send-message", { agentUrl: "http://127.0.0.1:1" });

    expect(execution.error?.code).toBe("INPUT_INVALID");
  });
});
