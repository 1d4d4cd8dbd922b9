import { request as httpRequest } from "node:http";
import { ClientFactory } from "@a2a-js/sdk/client";
import { describe, expect, it } from "vitest";
import { testSkill, useA2aTestServer } from "./a2a-test-server.js";

const startServer = useA2aTestServer();

async function fetchCard(url: string, version?: string) {
  const response = await fetch(`${url}/.well-known/agent-card.json`, {
    headers: version === undefined ? {} : { "A2A-Version": version },
  });
  expect(response.status).toBe(200);
  // biome-ignore lint/suspicious/noExplicitAny: the test reads fields of the JSON card.
  return (await response.json()) as any;
}

describe("createHttpApp: A2A agent card", () => {
  it("lists the enabled global skills at their highest stable version, and no other", async () => {
    const running = await startServer();
    const { registry } = running.host;
    registry.register(testSkill({ name: "echo", version: "1.0.0", description: "old echo" }));
    registry.register(testSkill({ name: "echo", version: "1.1.0", description: "new echo", tags: ["demo"] }));
    registry.register(testSkill({ name: "echo", version: "2.0.0-beta.1", description: "beta echo" }));
    registry.register(testSkill({ name: "public-echo", apiKeyId: "public" }));
    registry.register(testSkill({ name: "private-echo", apiKeyId: "alice" }));
    registry.register(testSkill({ name: "disabled-echo", enabled: false }));

    const card = await new ClientFactory()
      .createFromUrl(running.server.url)
      .then((client) => client.getAgentCard());

    expect(card.skills.map((skill) => skill.id).sort()).toEqual(["echo", "public-echo"]);
    expect(card.skills.find((skill) => skill.id === "echo")).toMatchObject({
      name: "echo",
      description: "new echo",
      tags: ["demo"],
    });
  });

  it("turns the manifest's examples into messages a client can send as they are", async () => {
    const running = await startServer();
    running.host.registry.register(
      testSkill({
        name: "echo",
        examples: [{ input: { msg: "hello" }, output: { echoed: "hello" } }],
      }),
    );

    const card = await fetchCard(running.server.url, "1.0");

    expect(card.skills[0].examples).toEqual(['{"skill":"echo","input":{"msg":"hello"}}']);
  });

  it("declares JSON-RPC at /a2a for A2A 1.0 and 0.3, streaming, and no security without API keys", async () => {
    const running = await startServer();

    const card = await fetchCard(running.server.url, "1.0");

    expect(card.supportedInterfaces).toEqual([
      { url: `${running.server.url}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${running.server.url}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
    ]);
    expect(card.capabilities).toEqual({
      streaming: true,
      pushNotifications: false,
      extendedAgentCard: false,
    });
    expect(card.defaultInputModes).toEqual(["application/json", "text/plain"]);
    expect(card.defaultOutputModes).toEqual(["application/json"]);
    expect(card.skills).toEqual([]);
    expect(card.securitySchemes).toBeUndefined();
  });

  it("declares the Bearer API key scheme when the server has keys, and is served without one", async () => {
    const running = await startServer({ apiKeys: { "alice-key": "alice" } });

    const card = await fetchCard(running.server.url, "1.0");
    const legacy = await fetchCard(running.server.url);

    expect(card.securitySchemes.skillboxApiKey.httpAuthSecurityScheme).toMatchObject({ scheme: "bearer" });
    expect(card.securityRequirements).toEqual([{ schemes: { skillboxApiKey: {} } }]);
    expect(legacy.securitySchemes.skillboxApiKey).toMatchObject({ type: "http", scheme: "bearer" });
    expect(legacy.security).toEqual([{ skillboxApiKey: [] }]);
  });

  it("without API keys serves the card only to loopback host names (DNS rebinding)", async () => {
    const running = await startServer();
    const { hostname, port } = new URL(running.server.url);
    const status = (host: string) =>
      new Promise<number | undefined>((resolve, reject) => {
        const request = httpRequest({
          hostname,
          port,
          path: "/.well-known/agent-card.json",
          agent: false,
          headers: { host },
        });
        request.on("error", reject);
        request.on("response", (response) => {
          response.resume();
          resolve(response.statusCode);
        });
        request.end();
      });

    expect(await status("evil.example")).toBe(403);
    expect(await status(`localhost:${port}`)).toBe(200);
  });

  it("serves the A2A 0.3 card to a request without A2A-Version, with the 1.0 interfaces embedded", async () => {
    const running = await startServer();
    running.host.registry.register(testSkill({ name: "echo" }));

    const card = await fetchCard(running.server.url);

    expect(card).toMatchObject({
      protocolVersion: "0.3",
      url: `${running.server.url}/a2a`,
      preferredTransport: "JSONRPC",
      capabilities: { streaming: true, pushNotifications: false },
      skills: [{ id: "echo", name: "echo", description: "The echo test skill", tags: [] }],
    });
    expect(card.supportedInterfaces).toHaveLength(2);
  });

  it("points clients at the configured public URL", async () => {
    const running = await startServer({
      a2a: { publicUrl: "https://skills.example.com/base/", name: "Acme skills" },
    });

    const card = await fetchCard(running.server.url, "1.0");

    expect(card.name).toBe("Acme skills");
    expect(card.supportedInterfaces[0].url).toBe("https://skills.example.com/base/a2a");
  });

  it("refuses a public URL that is not http(s)", async () => {
    await expect(startServer({ a2a: { publicUrl: "ftp://skills.example.com" } })).rejects.toMatchObject({
      code: "SERVER_CONFIG_INVALID",
    });
  });

  it("serves neither the card nor /a2a when a2a is false", async () => {
    const running = await startServer({ a2a: false });

    const card = await fetch(`${running.server.url}/.well-known/agent-card.json`);
    const rpc = await fetch(`${running.server.url}/a2a`, { method: "POST", body: "{}" });

    expect(card.status).toBe(404);
    expect(rpc.status).toBe(404);
  });
});
