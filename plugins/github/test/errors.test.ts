import { once } from "node:events";
import type { IncomingMessage } from "node:http";
import { setTimeout } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { sendJson, serveJson } from "./helpers/fake-github.ts";
import { repositoryJson } from "./helpers/github-fixtures.ts";
import { createCapturingLogger } from "./helpers/github-host.ts";
import { createTestBed } from "./helpers/test-bed.ts";

const TOKEN = "ghp_doNotLeakThisToken_0123456789";

const bed = createTestBed();
afterEach(() => bed.cleanup());

describe("GitHub error answers", () => {
  it("turns a 401 into UPSTREAM_ERROR telling to check the token, without printing it", async () => {
    const fake = await bed.server();
    fake.route("/repos/octo/demo", (_request, response) =>
      sendJson(response, 401, { message: "Bad credentials" }),
    );
    const host = bed.host({ apiUrl: fake.apiUrl, token: TOKEN });

    const execution = await host.executor.execute("github.repository", { owner: "octo", repo: "demo" });
    expect(execution.error).toMatchObject({
      code: "UPSTREAM_ERROR",
      data: { status: 401, githubMessage: "Bad credentials" },
    });
    expect(execution.error?.message).toContain("check SKILLBOX_GITHUB_TOKEN");
    expect(JSON.stringify(execution.error)).not.toContain(TOKEN);
  });

  it("turns a 404 into 'repository not found or token lacks access', never retried", async () => {
    const fake = await bed.server();
    const host = bed.host({ apiUrl: fake.apiUrl, token: TOKEN });

    const execution = await host.executor.execute(
      "github.repository",
      { owner: "octo", repo: "missing" },
      { maxRetries: 2 },
    );
    expect(execution.error?.code).toBe("UPSTREAM_ERROR");
    expect(execution.error?.message).toContain(
      "repository octo/missing not found, or the token lacks access to it",
    );
    expect(execution.attempts).toBe(1);
  });

  it("turns a 5xx into a retryable UPSTREAM_ERROR", async () => {
    const fake = await bed.server();
    fake.route("/repos/octo/demo", (_request, response) =>
      sendJson(response, 502, { message: "Server Error" }),
    );
    const host = bed.host({ apiUrl: fake.apiUrl });

    const execution = await host.executor.execute(
      "github.repository",
      { owner: "octo", repo: "demo" },
      { retry: { maxAttempts: 2, initialDelayMs: 1 } },
    );
    expect(execution.error).toMatchObject({ code: "UPSTREAM_ERROR", data: { status: 502 } });
    expect(execution.attempts).toBe(2);
    expect(fake.requests).toHaveLength(2);
  });

  it("reports an unreachable API as a retryable UPSTREAM_ERROR", async () => {
    const fake = await bed.server();
    const apiUrl = fake.apiUrl;
    await fake.close();
    const host = bed.host({ apiUrl });

    const execution = await host.executor.execute(
      "github.repository",
      { owner: "octo", repo: "demo" },
      { retry: { maxAttempts: 2, initialDelayMs: 1 } },
    );
    expect(execution.error?.code).toBe("UPSTREAM_ERROR");
    expect(execution.error?.message).toContain(`could not reach GitHub at ${apiUrl}`);
    expect(execution.attempts).toBe(2);
  });

  it("says so when the API URL serves something that is not JSON", async () => {
    const fake = await bed.server();
    fake.route("/repos/octo/demo", (_request, response) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.end("<html>Sign in</html>");
    });
    const host = bed.host({ apiUrl: fake.apiUrl });

    const execution = await host.executor.execute("github.repository", { owner: "octo", repo: "demo" });
    expect(execution.error?.code).toBe("UPSTREAM_ERROR");
    expect(execution.error?.message).toContain("is SKILLBOX_GITHUB_API_URL the API");
  });

  it("reports a body of the wrong shape as UPSTREAM_ERROR", async () => {
    const fake = await bed.server();
    serveJson(fake, "/repos/octo/demo", { full_name: 42 });
    const host = bed.host({ apiUrl: fake.apiUrl });

    const execution = await host.executor.execute("github.repository", { owner: "octo", repo: "demo" });
    expect(execution.error?.code).toBe("UPSTREAM_ERROR");
    expect(execution.error?.message).toContain("does not have the expected shape");
  });
});

describe("GitHub token secrecy", () => {
  it("keeps the token out of the audit trail, errors and logs", async () => {
    const fake = await bed.server();
    serveJson(fake, "/repos/octo/demo", repositoryJson());
    // A misbehaving server echoing the Authorization header back in its error message.
    fake.route("/repos/octo/echo", (request, response) =>
      sendJson(response, 403, { message: `forbidden for ${request.headers.authorization}` }),
    );
    const { logger, lines } = createCapturingLogger();
    const host = bed.host({ apiUrl: fake.apiUrl, token: TOKEN }, { logger });

    const success = await host.executor.execute("github.repository", { owner: "octo", repo: "demo" });
    const echoed = await host.executor.execute("github.repository", { owner: "octo", repo: "echo" });
    const missing = await host.executor.execute("github.repository", { owner: "octo", repo: "missing" });

    expect(success.status).toBe("success");
    expect(echoed.error?.message).toContain("forbidden for Bearer [token]");
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    for (const execution of [success, echoed, missing]) {
      expect(JSON.stringify(await host.executor.getExecution(execution.id))).not.toContain(TOKEN);
    }
    const rows = host.database.prepare("SELECT * FROM skill_executions").all();
    expect(rows).toHaveLength(3);
    expect(JSON.stringify(rows)).not.toContain(TOKEN);
    expect(lines.some((line) => line.message === "github request")).toBe(true);
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
  });
});

describe("GitHub requests and the execution's signal", () => {
  /** A route that never answers, resolving `arrived` with the request so the test can watch its socket. */
  function hold(): { route: (request: IncomingMessage) => void; arrived: Promise<IncomingMessage> } {
    let arrive: (request: IncomingMessage) => void = () => undefined;
    const arrived = new Promise<IncomingMessage>((resolve) => {
      arrive = resolve;
    });
    return { route: (request) => arrive(request), arrived };
  }

  it("stops a slow request on timeout: the server sees the connection closed", async () => {
    const fake = await bed.server();
    const slow = hold();
    fake.route("/repos/octo/slow", slow.route);
    const host = bed.host({ apiUrl: fake.apiUrl });

    const running = host.executor.execute(
      "github.repository",
      { owner: "octo", repo: "slow" },
      { timeoutMs: 300 },
    );
    const request = await slow.arrived;
    const closed = once(request.socket, "close");
    const execution = await running;
    expect(execution.status).toBe("timeout");
    expect(execution.error?.code).toBe("TIMEOUT");
    await closed;
  });

  it("stops a slow request when the caller cancels", async () => {
    const fake = await bed.server();
    const slow = hold();
    fake.route("/repos/octo/slow", slow.route);
    const host = bed.host({ apiUrl: fake.apiUrl });
    const controller = new AbortController();

    const running = host.executor.execute(
      "github.repository",
      { owner: "octo", repo: "slow" },
      { signal: controller.signal },
    );
    const request = await slow.arrived;
    const closed = once(request.socket, "close");
    controller.abort();
    expect((await running).status).toBe("cancelled");
    await closed;
  });

  it("cuts a rate-limit wait short when the execution times out", async () => {
    const fake = await bed.server();
    fake.route("/repos/octo/demo", (_request, response) =>
      sendJson(response, 429, { message: "slow down" }, { "retry-after": "1" }),
    );
    const host = bed.host({ apiUrl: fake.apiUrl, rateLimitMaxWaitMs: 20_000 });

    const execution = await host.executor.execute(
      "github.repository",
      { owner: "octo", repo: "demo" },
      { timeoutMs: 300 },
    );
    expect(execution.status).toBe("timeout");
    // Had the wait ignored the signal, the retry would arrive one second after the first request.
    await setTimeout(1_500);
    expect(fake.requests).toHaveLength(1);
  });
});
