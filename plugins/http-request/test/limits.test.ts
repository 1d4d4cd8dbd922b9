import { describe, expect, it } from "vitest";
import { useHttpRequestTestBed } from "./helpers/http-request-test-bed.js";

const { serve, hostWith, request } = useHttpRequestTestBed({ settings: { allowPrivate: ["127.0.0.1"] } });

/** A promise the server settles when a response's connection closes, with whether the response had finished. */
function closeWatcher() {
  let settle: (finished: boolean) => void = () => undefined;
  const closed = new Promise<boolean>((resolve) => {
    settle = resolve;
  });
  return { closed, settle };
}

describe("createHttpRequestSkill methods allowlist", () => {
  it("refuses a method outside the allowlist with REQUEST_REFUSED, sending nothing", async () => {
    const server = await serve((_request, response) => response.end());
    const execution = await request(hostWith(), { url: server.origin, method: "DELETE" });
    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe("REQUEST_REFUSED");
    expect(execution.error?.message).toContain("SKILLBOX_HTTP_ALLOWED_METHODS");
    expect(execution.error?.message).toContain("GET, HEAD, OPTIONS");
    expect(server.connections).toBe(0);
  });

  it("sends a method the allowlist names", async () => {
    const server = await serve((_request, response) => response.end());
    const execution = await request(hostWith({ allowedMethods: ["delete"] }), {
      url: server.origin,
      method: "DELETE",
    });
    expect(execution.output.status).toBe(200);
    expect(server.requests[0]?.method).toBe("DELETE");
  });
});

describe("createHttpRequestSkill redirects", () => {
  it("follows redirects and reports each hop", async () => {
    const server = await serve((request, response) => {
      if (request.url === "/a") response.writeHead(302, { location: "/b" }).end();
      else if (request.url === "/b") response.writeHead(301, { location: "/c?x=1" }).end();
      else response.writeHead(200, { "content-type": "text/plain" }).end("done");
    });
    const { output } = await request(hostWith(), { url: `${server.origin}/a` });
    expect(output).toMatchObject({
      status: 200,
      url: `${server.origin}/c?x=1`,
      redirects: [`${server.origin}/b`, `${server.origin}/c?x=1`],
      body: "done",
    });
  });

  it("turns a POST into a GET on 303 and keeps method and body on 307", async () => {
    const server = await serve((request, response) => {
      if (request.url === "/see-other") response.writeHead(303, { location: "/result" }).end();
      else if (request.url === "/temporary") response.writeHead(307, { location: "/result" }).end();
      else response.end();
    });
    const host = hostWith({ allowedMethods: ["GET", "POST"] });
    await request(host, { url: `${server.origin}/see-other`, method: "POST", json: { a: 1 } });
    expect(server.requests[1]).toMatchObject({ method: "GET", path: "/result", body: "" });
    expect(server.requests[1]?.headers["content-type"]).toBeUndefined();
    await request(host, { url: `${server.origin}/temporary`, method: "POST", json: { a: 1 } });
    expect(server.requests[3]).toMatchObject({ method: "POST", path: "/result", body: '{"a":1}' });
  });

  it("returns the redirect itself when followRedirects is false", async () => {
    const server = await serve((_request, response) =>
      response.writeHead(302, { location: "/elsewhere" }).end(),
    );
    const { output } = await request(hostWith(), { url: server.origin, followRedirects: false });
    expect(output).toMatchObject({ status: 302, redirects: [], headers: { location: "/elsewhere" } });
    expect(server.requests).toHaveLength(1);
  });

  it("drops forwarded credentials on a redirect to another origin but keeps them on the same origin", async () => {
    const other = await serve((_request, response) => response.end());
    const server = await serve((request, response) => {
      if (request.url === "/away") response.writeHead(302, { location: `${other.origin}/landing` }).end();
      else if (request.url === "/stay") response.writeHead(302, { location: "/landing" }).end();
      else response.end();
    });
    const host = hostWith({ forwardHeaders: ["authorization"] });
    const headers = { Authorization: "Bearer t", "X-Trace": "1" };
    await request(host, { url: `${server.origin}/away`, headers });
    expect(server.requests[0]?.headers.authorization).toBe("Bearer t");
    expect(other.requests[0]?.headers.authorization).toBeUndefined();
    expect(other.requests[0]?.headers["x-trace"]).toBe("1");
    await request(host, { url: `${server.origin}/stay`, headers });
    expect(server.requests[2]).toMatchObject({ path: "/landing", headers: { authorization: "Bearer t" } });
  });

  it("fails with UPSTREAM_ERROR after SKILLBOX_HTTP_MAX_REDIRECTS hops", async () => {
    const server = await serve((request, response) => {
      const hop = Number(request.url?.slice(1) || 0);
      response.writeHead(302, { location: `/${hop + 1}` }).end();
    });
    const execution = await request(hostWith({ maxRedirects: 2 }), { url: `${server.origin}/0` });
    expect(execution.error?.code).toBe("UPSTREAM_ERROR");
    expect(execution.error?.message).toContain("SKILLBOX_HTTP_MAX_REDIRECTS");
    expect(execution.error?.data).toMatchObject({
      maxRedirects: 2,
      redirects: [`${server.origin}/1`, `${server.origin}/2`],
    });
    expect(server.requests.map((recorded) => recorded.path)).toEqual(["/0", "/1", "/2"]);
  });
});

describe("createHttpRequestSkill response size cap", () => {
  it("refuses a declared Content-Length above the cap and closes the connection", async () => {
    const watcher = closeWatcher();
    const server = await serve((_request, response) => {
      response.on("close", () => watcher.settle(response.writableFinished));
      response.writeHead(200, { "content-type": "text/plain", "content-length": String(10 * 1024 * 1024) });
      response.write("x".repeat(1024));
    });
    const execution = await request(hostWith({ maxResponseBytes: 4096 }), { url: server.origin });
    expect(execution.error?.code).toBe("SIZE_LIMIT_EXCEEDED");
    expect(execution.error?.data).toMatchObject({ limit: 4096, contentLength: 10 * 1024 * 1024 });
    expect(execution.error?.message).toContain("SKILLBOX_HTTP_MAX_RESPONSE_BYTES");
    expect(await watcher.closed).toBe(false);
  });

  it("stops reading a chunked body at the cap and closes the connection", async () => {
    const watcher = closeWatcher();
    const server = await serve((_request, response) => {
      response.on("close", () => watcher.settle(response.writableFinished));
      response.writeHead(200, { "content-type": "application/octet-stream" });
      const chunk = Buffer.alloc(16 * 1024, 1);
      // Writes for as long as the client keeps reading: only closing the connection stops it.
      const pump = () => {
        while (!response.destroyed && response.write(chunk)) {}
      };
      response.on("drain", pump);
      pump();
    });
    const execution = await request(hostWith(), { url: server.origin, maxResponseBytes: 64 * 1024 });
    expect(execution.error?.code).toBe("SIZE_LIMIT_EXCEEDED");
    expect(execution.error?.data).toMatchObject({ limit: 64 * 1024 });
    expect(await watcher.closed).toBe(false);
  });

  it("accepts a body of exactly the cap", async () => {
    const server = await serve((_request, response) => response.end(Buffer.alloc(100, 7)));
    const { output } = await request(hostWith({ maxResponseBytes: 100 }), { url: server.origin });
    expect(output.bytes).toBe(100);
  });

  it("refuses a maxResponseBytes above the configured cap", async () => {
    const server = await serve((_request, response) => response.end());
    const execution = await request(hostWith({ maxResponseBytes: 1000 }), {
      url: server.origin,
      maxResponseBytes: 1001,
    });
    expect(execution.error?.code).toBe("REQUEST_REFUSED");
    expect(execution.error?.message).toContain("SKILLBOX_HTTP_MAX_RESPONSE_BYTES");
    expect(server.connections).toBe(0);
  });
});

describe("createHttpRequestSkill cancellation", () => {
  it("ends as timeout through the executor and closes the connection", async () => {
    const watcher = closeWatcher();
    const server = await serve((_request, response) => {
      response.on("close", () => watcher.settle(response.writableFinished));
    });
    const execution = await request(hostWith(), { url: server.origin }, { timeoutMs: 300 });
    expect(execution.status).toBe("timeout");
    expect(execution.error?.code).toBe("TIMEOUT");
    expect(await watcher.closed).toBe(false);
  });

  it("ends as cancelled when the caller aborts, and closes the connection", async () => {
    const watcher = closeWatcher();
    const controller = new AbortController();
    const server = await serve((_request, response) => {
      response.on("close", () => watcher.settle(response.writableFinished));
      controller.abort();
    });
    const execution = await request(hostWith(), { url: server.origin }, { signal: controller.signal });
    expect(execution.status).toBe("cancelled");
    expect(await watcher.closed).toBe(false);
  });
});

describe("createHttpRequestSkill input checks", () => {
  it.each([
    [{ url: "not a url" }, "INPUT_INVALID"],
    [{ url: "http://127.0.0.1/", body: "a", json: {} }, "INPUT_INVALID"],
    [{ url: "http://127.0.0.1/", body: "a" }, "INPUT_INVALID"],
    [{ url: "http://127.0.0.1/", headers: { "bad header": "x" } }, "INPUT_INVALID"],
    [{ url: "http://127.0.0.1/", headers: { "x-injected": "a\r\nb: c" } }, "INPUT_INVALID"],
    [{ url: "http://127.0.0.1/", responseType: "xml" }, "INPUT_INVALID"],
  ])("rejects %j with %s", async (input, code) => {
    const execution = await request(hostWith({ allowedMethods: ["GET", "POST"] }), input);
    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe(code);
  });
});
