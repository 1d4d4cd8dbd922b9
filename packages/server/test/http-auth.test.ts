import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { echoSkill, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();
const KEYS = { "alice-key": "alice", "bob-key": "bob" };

describe("createHttpApp: authentication", () => {
  it("is 401 AUTH_REQUIRED without an Authorization header, with a Bearer challenge", async () => {
    const api = await startApi({ apiKeys: KEYS });

    const response = await api.call("GET", "/api/skills");

    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe("AUTH_REQUIRED");
    expect(response.body.error.message).toContain("Authorization: Bearer");
    expect(response.headers.get("www-authenticate")).toContain("Bearer");
  });

  it("is 401 AUTH_INVALID for an unknown key or another scheme", async () => {
    const api = await startApi({ apiKeys: KEYS });
    api.host.registry.register(echoSkill());

    const unknown = await api.call("POST", "/api/skills/echo/execute", {
      key: "mallory-key",
      json: { input: { msg: "x" } },
    });
    const basic = await api.call("GET", "/api/skills", {
      headers: { authorization: "Basic YWxpY2Uta2V5Og==" },
    });

    expect(unknown.status).toBe(401);
    expect(unknown.body.error.code).toBe("AUTH_INVALID");
    expect(basic.status).toBe(401);
    expect(basic.body.error.message).toContain("Bearer <key>");
    expect(await api.host.executor.countExecutions()).toBe(0);
  });

  it("authenticates before reading the body: a stranger's oversized body is 401, not 413", async () => {
    const api = await startApi({ apiKeys: KEYS, maxBodyBytes: 16 });

    const response = await api.call("POST", "/api/skills/echo/execute", { json: { input: "x".repeat(100) } });

    expect(response.status).toBe(401);
  });

  it("without keys treats every caller as `public`", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());

    const response = await api.call("POST", "/api/skills/echo/execute", { json: { input: { msg: "x" } } });

    expect(response.status).toBe(200);
    expect(response.body.apiKeyId).toBe("public");
  });

  it("without keys refuses requests addressed to a non-loopback host name (DNS rebinding)", async () => {
    const api = await startApi();
    const { hostname, port } = new URL(api.server.url);
    const status = (host: string) =>
      new Promise<number | undefined>((resolve, reject) => {
        const request = httpRequest({ hostname, port, path: "/api/skills", agent: false, headers: { host } });
        request.on("error", reject);
        request.on("response", (response) => {
          response.resume();
          resolve(response.statusCode);
        });
        request.end();
      });

    expect(await status("evil.example:80")).toBe(403);
    expect(await status(`localhost:${port}`)).toBe(200);
    expect(await status(`[::1]:${port}`)).toBe(200);
  });

  it("answers unknown routes with 404 NOT_FOUND in the error shape", async () => {
    const api = await startApi();

    const response = await api.call("GET", "/api/nothing");

    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("NOT_FOUND");
  });
});

describe("createHttpApp: /mcp", () => {
  it("hands every method to the `mcp` hook with the authenticated owner", async () => {
    const seen: Array<{ method: string; owner: string; body: string }> = [];
    const api = await startApi({
      apiKeys: KEYS,
      mcp: async (request, owner) => {
        seen.push({ method: request.method, owner, body: await request.text() });
        return Response.json({ jsonrpc: "2.0", id: 1, result: {} });
      },
    });

    const post = await api.call("POST", "/mcp", {
      key: "bob-key",
      json: { jsonrpc: "2.0", id: 1, method: "ping" },
    });
    const get = await api.call("GET", "/mcp", { key: "alice-key" });
    const stranger = await api.call("POST", "/mcp", { json: {} });

    expect(post.status).toBe(200);
    expect(post.body).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    expect(get.status).toBe(200);
    expect(stranger.status).toBe(401);
    expect(seen).toEqual([
      { method: "POST", owner: "bob", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) },
      { method: "GET", owner: "alice", body: "" },
    ]);
  });

  it("is 404 when no `mcp` hook is given", async () => {
    const api = await startApi();

    const response = await api.call("POST", "/mcp", { json: {} });

    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("NOT_FOUND");
  });
});
