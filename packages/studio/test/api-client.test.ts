// The Studio's API client against a real loopback HTTP server: every answer it cannot use becomes
// an ApiError (a view shows it), never another error that leaves the view waiting.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../src/app/api/api-client.js";
import { ApiError } from "../src/app/api/api-error.js";

let server: Server;
let api: ApiClient;

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === "/api/caller") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"owner": "public", "approver"');
    } else if (request.url === "/api/skills/echo/execute") {
      response.writeHead(200, { "content-type": "text/html" });
      response.end("<html>a proxy's page</html>");
    } else {
      response.writeHead(404, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { code: "NOT_FOUND", message: "no such route" } }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  api = new ApiClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: () => null });
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("ApiClient", () => {
  it("turns a 2xx answer that is not JSON into an ApiError naming the request", async () => {
    const failure = await api.caller().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 200, code: "BAD_RESPONSE" });
    expect((failure as ApiError).message).toContain("GET /api/caller");

    const executed = await api.executeSkill("echo", { input: {} }).catch((error: unknown) => error);
    expect(executed).toBeInstanceOf(ApiError);
    expect(executed).toMatchObject({ status: 200, code: "BAD_RESPONSE" });
    expect((executed as ApiError).message).toContain("POST /api/skills/echo/execute");
  });

  it("keeps the server's own error code and message", async () => {
    await expect(api.getExecution("missing")).rejects.toMatchObject({
      status: 404,
      code: "NOT_FOUND",
      message: "no such route",
    });
  });
});
