import { isDefinedSkill } from "@skillbox/core";
import { afterEach, describe, expect, it, vi } from "vitest";
import httpRequest from "../index.ts";
import { type LoggedLine, manifest } from "./helpers/http-request-host.js";
import { useHttpRequestTestBed } from "./helpers/http-request-test-bed.js";
import { startRecordingServer } from "./helpers/recording-server.js";

// Loopback allowed explicitly, as every test that talks to a local server needs.
const { serve, hostFor, hostWith, request } = useHttpRequestTestBed({
  settings: { allowPrivate: ["127.0.0.1"] },
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("http-request skill", () => {
  it("default-exports a defined skill", () => {
    expect(isDefinedSkill(httpRequest)).toBe(true);
  });

  it("declares the same schemas in code as in skill.json", () => {
    expect(httpRequest.input).toMatchObject(manifest.input ?? {});
    expect(httpRequest.output).toMatchObject(manifest.output ?? {});
    expect(manifest.input).toMatchObject(httpRequest.input ?? {});
    expect(manifest.output).toMatchObject(httpRequest.output ?? {});
  });

  it("returns a text body, status and headers", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "text/plain; charset=utf-8", "x-answer": "42" });
      response.end("hello, world");
    });
    const execution = await request(hostWith(), { url: `${server.origin}/greeting?name=x` });
    expect(execution.status).toBe("success");
    expect(execution.output).toMatchObject({
      status: 200,
      statusText: "OK",
      url: `${server.origin}/greeting?name=x`,
      redirects: [],
      body: "hello, world",
      bytes: 12,
    });
    expect(execution.output.headers["x-answer"]).toBe("42");
    expect(server.requests[0]).toMatchObject({ method: "GET", path: "/greeting?name=x" });
  });

  it("parses a JSON body by content type", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/problem+json" });
      response.end(JSON.stringify({ items: [1, 2], ok: true }));
    });
    const { output } = await request(hostWith(), { url: server.origin });
    expect(output.json).toEqual({ items: [1, 2], ok: true });
    expect(output.body).toBeUndefined();
  });

  it("returns binary bodies as base64, and any body as the responseType asked for", async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const server = await serve((request, response) => {
      const isJson = request.url === "/json";
      response.writeHead(200, { "content-type": isJson ? "application/json" : "application/octet-stream" });
      response.end(isJson ? '{"a":1}' : bytes);
    });
    const host = hostWith();
    const binary = await request(host, { url: server.origin });
    expect(binary.output).toMatchObject({ base64: bytes.toString("base64"), bytes: 5 });
    const asBase64 = await request(host, { url: `${server.origin}/json`, responseType: "base64" });
    expect(asBase64.output.base64).toBe(Buffer.from('{"a":1}').toString("base64"));
    const asText = await request(host, { url: `${server.origin}/json`, responseType: "text" });
    expect(asText.output.body).toBe('{"a":1}');
  });

  it("fails with UPSTREAM_ERROR when JSON asked for does not parse, but falls back to text when only labelled JSON", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end("<html>not json</html>");
    });
    const host = hostWith();
    const labelled = await request(host, { url: server.origin });
    expect(labelled.output.body).toBe("<html>not json</html>");
    const asked = await request(host, { url: server.origin, responseType: "json" });
    expect(asked.status).toBe("error");
    expect(asked.error?.code).toBe("UPSTREAM_ERROR");
    expect(asked.error?.message).toContain('responseType: "text"');
  });

  it("sends a JSON body with its content type and gets it echoed back", async () => {
    const server = await serve((request, response, recorded) => {
      response.writeHead(201, { "content-type": "application/json" });
      response.end(
        JSON.stringify({ received: JSON.parse(recorded.body), type: request.headers["content-type"] }),
      );
    });
    const host = hostWith({ allowedMethods: ["GET", "POST"] });
    const { output } = await request(host, {
      url: server.origin,
      method: "post",
      json: { name: "skill", n: [1] },
    });
    expect(output.status).toBe(201);
    expect(output.json).toEqual({ received: { name: "skill", n: [1] }, type: "application/json" });
    expect(server.requests[0]?.method).toBe("POST");
  });

  it("sends a text body with the caller's content type", async () => {
    const server = await serve((_request, response) => response.end());
    const host = hostWith({ allowedMethods: ["PUT"] });
    const execution = await request(host, {
      url: server.origin,
      method: "PUT",
      headers: { "Content-Type": "text/csv" },
      body: "a,b\n1,2\n",
    });
    expect(execution.output).toMatchObject({ status: 200, body: "", bytes: 0 });
    expect(server.requests[0]).toMatchObject({ body: "a,b\n1,2\n", headers: { "content-type": "text/csv" } });
  });

  it("returns HTTP error statuses instead of failing", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(503, { "content-type": "text/plain" });
      response.end("down for maintenance");
    });
    const execution = await request(hostWith(), { url: server.origin });
    expect(execution.status).toBe("success");
    expect(execution.output).toMatchObject({
      status: 503,
      statusText: "Service Unavailable",
      body: "down for maintenance",
    });
  });

  it("answers HEAD without reading a body", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "text/plain", "content-length": "999999999" });
      response.end();
    });
    const { output } = await request(hostWith({ maxResponseBytes: 100 }), {
      url: server.origin,
      method: "HEAD",
    });
    expect(output).toMatchObject({ status: 200, body: "", bytes: 0 });
    expect(output.headers["content-length"]).toBe("999999999");
  });

  it("drops credential and hop-by-hop headers by default, logging only their names", async () => {
    const server = await serve((_request, response) => response.end("ok"));
    const logs: LoggedLine[] = [];
    const host = hostWith({}, logs);
    await request(host, {
      url: server.origin,
      headers: {
        Cookie: "session=cookie-secret",
        Authorization: "Bearer token-secret",
        "X-Api-Key": "key-secret",
        Host: "internal.example",
        Connection: "close",
        "X-Custom": "kept",
      },
    });
    const seen = server.requests[0]?.headers ?? {};
    expect(seen.cookie).toBeUndefined();
    expect(seen.authorization).toBeUndefined();
    expect(seen["x-api-key"]).toBeUndefined();
    expect(seen.host).toBe(`127.0.0.1:${server.port}`);
    expect(seen["x-custom"]).toBe("kept");
    const warning = logs.find(
      (line) => line.level === "warn" && line.message.includes("dropped request headers"),
    );
    expect(warning?.fields?.headers).toEqual([
      "cookie (credential)",
      "authorization (credential)",
      "x-api-key (credential)",
      "host (hop-by-hop)",
      "connection (hop-by-hop)",
    ]);
    expect(JSON.stringify(logs)).not.toMatch(/secret/);
  });

  it("refuses header values fetch cannot send with INPUT_INVALID, sending nothing and quoting no value", async () => {
    const server = await serve((_request, response) => response.end("ok"));
    for (const value of ["bell\u0007-secret", "\u0100-secret", "del\u007f-secret"]) {
      const execution = await request(hostWith(), { url: server.origin, headers: { "x-token": value } });
      expect(execution.error?.code, value).toBe("INPUT_INVALID");
      expect(execution.error?.message, value).not.toContain("secret");
    }
    expect(server.connections).toBe(0);
    const latin1 = await request(hostWith(), { url: server.origin, headers: { "x-name": "caf\u00e9\tok" } });
    expect(latin1.status).toBe("success");
  });

  it("forwards credential headers that SKILLBOX_HTTP_FORWARD_HEADERS lists", async () => {
    const server = await serve((_request, response) => response.end("ok"));
    const host = hostWith({ forwardHeaders: ["authorization", "cookie"] });
    await request(host, { url: server.origin, headers: { Cookie: "session=1", Authorization: "Bearer t" } });
    expect(server.requests[0]?.headers).toMatchObject({ cookie: "session=1", authorization: "Bearer t" });
  });

  it("strips set-cookie from the response unless configured", async () => {
    const server = await serve((_request, response) => {
      response.setHeader("set-cookie", ["a=1; Path=/", "b=2; HttpOnly"]);
      response.end("ok");
    });
    const stripped = await request(hostWith(), { url: server.origin });
    expect(stripped.output.headers["set-cookie"]).toBeUndefined();
    const kept = await request(hostWith({ forwardHeaders: ["set-cookie"] }), { url: server.origin });
    expect(kept.output.headers["set-cookie"]).toBe("a=1; Path=/, b=2; HttpOnly");
  });

  it("fails with a retryable UPSTREAM_ERROR when nothing listens", async () => {
    const server = await startRecordingServer((_request, response) => response.end());
    const closedOrigin = server.origin;
    await server.close();
    const execution = await request(
      hostWith(),
      { url: closedOrigin },
      { maxRetries: 1, retry: { initialDelayMs: 1 } },
    );
    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe("UPSTREAM_ERROR");
    expect(execution.attempts).toBe(2);
    expect(execution.error?.message).toContain(`127.0.0.1:${server.port}`);
  });

  it("reads its settings from the environment on every call when created without settings", async () => {
    const server = await serve((_request, response) => response.end("ok"));
    const host = hostFor(httpRequest);
    vi.stubEnv("SKILLBOX_HTTP_ALLOW_PRIVATE", "");
    const refused = await request(host, { url: server.origin });
    expect(refused.error?.code).toBe("URL_REFUSED");
    vi.stubEnv("SKILLBOX_HTTP_ALLOW_PRIVATE", "10.0.0.0/8, 127.0.0.1");
    const allowed = await request(host, { url: server.origin });
    expect(allowed.error).toBeNull();
    expect(allowed.output).toMatchObject({ status: 200, base64: Buffer.from("ok").toString("base64") });
    vi.stubEnv("SKILLBOX_HTTP_MAX_REDIRECTS", "many");
    const misconfigured = await request(host, { url: server.origin });
    expect(misconfigured.error?.code).toBe("CONFIG_INVALID");
    expect(misconfigured.error?.message).toContain("SKILLBOX_HTTP_MAX_REDIRECTS");
  });
});
