import { afterEach, describe, expect, it } from "vitest";
import { type FakeRoute, sendJson } from "./helpers/fake-github.ts";
import { repositoryJson } from "./helpers/github-fixtures.ts";
import { createCapturingLogger } from "./helpers/github-host.ts";
import { createTestBed } from "./helpers/test-bed.ts";

const bed = createTestBed();
afterEach(() => bed.cleanup());

/** A route answering with each of `answers` in turn, then repeating the last one. */
function inTurn(...answers: FakeRoute[]): FakeRoute {
  let calls = 0;
  return (request, response, url) => answers[Math.min(calls++, answers.length - 1)]!(request, response, url);
}

const repository: FakeRoute = (_request, response) => sendJson(response, 200, repositoryJson());

const limited =
  (status: number, headers: Record<string, string>, message = "API rate limit exceeded"): FakeRoute =>
  (_request, response) =>
    sendJson(response, status, { message }, headers);

describe("GitHub rate limits", () => {
  it("waits out a 429 with Retry-After, then succeeds", async () => {
    const fake = await bed.server();
    fake.route("/repos/octo/demo", inTurn(limited(429, { "retry-after": "1" }), repository));
    const { logger, lines } = createCapturingLogger();
    const host = bed.host({ apiUrl: fake.apiUrl }, { logger });

    const execution = await host.executor.execute("github.repository", { owner: "octo", repo: "demo" });
    expect(execution.status).toBe("success");
    expect(execution.attempts).toBe(1);
    expect(fake.requests).toHaveLength(2);
    expect(lines).toContainEqual(
      expect.objectContaining({
        message: "github rate limit: waiting before retrying",
        fields: expect.objectContaining({ waitMs: 1000 }),
      }),
    );
  });

  it("waits until X-RateLimit-Reset after a 403 with X-RateLimit-Remaining 0", async () => {
    const fake = await bed.server();
    const primary: FakeRoute = (request, response, url) =>
      limited(403, {
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": String(Math.ceil(Date.now() / 1000) + 1),
      })(request, response, url);
    fake.route("/repos/octo/demo", inTurn(primary, repository));
    const host = bed.host({ apiUrl: fake.apiUrl });

    const execution = await host.executor.execute("github.repository", { owner: "octo", repo: "demo" });
    expect(execution.status).toBe("success");
    expect(fake.requests).toHaveLength(2);
  });

  it("fails with RATE_LIMITED at once when the wait is longer than allowed", async () => {
    const fake = await bed.server();
    fake.route("/repos/octo/demo", limited(429, { "retry-after": "3600" }));
    const host = bed.host({ apiUrl: fake.apiUrl, rateLimitMaxWaitMs: 10_000 });

    const execution = await host.executor.execute("github.repository", { owner: "octo", repo: "demo" });
    expect(execution.status).toBe("error");
    expect(execution.error).toMatchObject({
      code: "RATE_LIMITED",
      data: { retryAfterMs: 3_600_000, resetAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
    });
    expect(execution.error?.message).toContain("longer than the allowed wait of 10000 ms");
    expect(execution.error?.message).toContain("set SKILLBOX_GITHUB_TOKEN");
    expect(execution.error?.message).toContain("SKILLBOX_GITHUB_RATE_LIMIT_MAX_WAIT_MS");
    expect(fake.requests).toHaveLength(1);
  });

  it("reports the reset time of an exhausted primary limit", async () => {
    const fake = await bed.server();
    const reset = Math.ceil(Date.now() / 1000) + 600;
    fake.route(
      "/repos/octo/demo",
      limited(403, {
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": String(reset),
        "x-ratelimit-limit": "60",
      }),
    );
    const host = bed.host({ apiUrl: fake.apiUrl, token: "ghp_rateLimitedToken" });

    const execution = await host.executor.execute("github.repository", { owner: "octo", repo: "demo" });
    const resetAt = new Date(reset * 1000).toISOString();
    expect(execution.error).toMatchObject({ code: "RATE_LIMITED", data: { resetAt } });
    expect(execution.error?.message).toContain(`resets at ${resetAt}`);
    expect(execution.error?.message).not.toContain("ghp_rateLimitedToken");
  });

  it("fails at once when the wait would outlast the skill's timeout", async () => {
    const fake = await bed.server();
    fake.route("/repos/octo/demo", limited(429, { "retry-after": "45" }));
    const host = bed.host({ apiUrl: fake.apiUrl, rateLimitMaxWaitMs: 120_000 });

    const execution = await host.executor.execute("github.repository", { owner: "octo", repo: "demo" });
    expect(execution.error?.code).toBe("RATE_LIMITED");
    expect(execution.error?.message).toContain("time left before the skill's timeout");
  });

  it("never waits when the maximum wait is 0", async () => {
    const fake = await bed.server();
    fake.route("/repos/octo/demo", inTurn(limited(429, { "retry-after": "1" }), repository));
    const host = bed.host({ apiUrl: fake.apiUrl, rateLimitMaxWaitMs: 0 });

    const execution = await host.executor.execute("github.repository", { owner: "octo", repo: "demo" });
    expect(execution.error?.code).toBe("RATE_LIMITED");
    expect(fake.requests).toHaveLength(1);
  });

  it("treats a secondary-limit 403 without headers as a one-minute wait", async () => {
    const fake = await bed.server();
    fake.route("/repos/octo/demo", limited(403, {}, "You have exceeded a secondary rate limit."));
    const host = bed.host({ apiUrl: fake.apiUrl });

    const execution = await host.executor.execute("github.repository", { owner: "octo", repo: "demo" });
    expect(execution.error).toMatchObject({ code: "RATE_LIMITED", data: { retryAfterMs: 60_000 } });
  });

  it("keeps a plain 403 an access error", async () => {
    const fake = await bed.server();
    fake.route("/repos/octo/demo", limited(403, {}, "Resource not accessible by integration"));
    const host = bed.host({ apiUrl: fake.apiUrl, token: "ghp_limitedScope" });

    const execution = await host.executor.execute("github.repository", { owner: "octo", repo: "demo" });
    expect(execution.error).toMatchObject({ code: "UPSTREAM_ERROR", data: { status: 403 } });
    expect(execution.error?.message).toContain("the token lacks a permission");
  });
});
