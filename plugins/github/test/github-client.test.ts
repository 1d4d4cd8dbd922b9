import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import { githubEtagCache } from "../lib/etag-cache.ts";
import { type FakeGithub, sendJson, serveJson, serveList } from "./helpers/fake-github.ts";
import {
  issueJson,
  pullRequestIssueJson,
  pullRequestJson,
  repositoryJson,
} from "./helpers/github-fixtures.ts";
import { createCapturingLogger } from "./helpers/github-host.ts";
import { createTestBed } from "./helpers/test-bed.ts";

const TOKEN = "ghp_clientTestToken0123456789";

const bed = createTestBed();
afterEach(() => bed.cleanup());

const pullRequests = (count: number) =>
  Array.from({ length: count }, (_, index) => pullRequestJson(count - index));

/** A fake GitHub whose octo/demo has `count` pull requests, and a host reading it without a token. */
async function withPullRequests(count: number): Promise<{ fake: FakeGithub; host: TemporaryHost }> {
  const fake = await bed.server();
  serveList(fake, "/repos/octo/demo/pulls", pullRequests(count));
  return { fake, host: bed.host({ apiUrl: fake.apiUrl }) };
}

/** Reads the repository octo/`repo` (octo/demo by default). */
function readRepository(host: TemporaryHost, repo = "demo") {
  return host.executor.execute("github.repository", { owner: "octo", repo });
}

/** Lists octo/demo's pull requests, up to `limit`. */
function listPullRequests(host: TemporaryHost, limit: number) {
  return host.executor.execute("github.pull-requests", { owner: "octo", repo: "demo", limit });
}

describe("GithubClient pagination", () => {
  it("follows Link pages up to the limit and reports truncated", async () => {
    const { fake, host } = await withPullRequests(250);

    const execution = await listPullRequests(host, 120);
    expect(execution.output).toMatchObject({ count: 120, truncated: true });
    expect(
      fake.requests.map((request) => new URL(request.path, fake.origin).searchParams.get("page")),
    ).toEqual([null, "2"]);
    expect(fake.requests[0]?.path).toContain("per_page=100");
  });

  it("reports truncated false when the pages run out before the limit", async () => {
    const { fake, host } = await withPullRequests(250);

    const execution = await listPullRequests(host, 1000);
    expect(execution.output).toMatchObject({ count: 250, truncated: false });
    expect(fake.requests).toHaveLength(3);
  });

  it("asks for no more than the limit per page and stops at an exact fit", async () => {
    const { fake, host } = await withPullRequests(7);

    const cut = await listPullRequests(host, 5);
    expect(cut.output).toMatchObject({ count: 5, truncated: true });
    expect(fake.requests[0]?.path).toContain("per_page=5");
    const exact = await listPullRequests(host, 7);
    expect(exact.output).toMatchObject({ count: 7, truncated: false });
  });

  it("keeps paging past filtered items (pull requests in the issues list)", async () => {
    const fake = await bed.server();
    const mixed = Array.from({ length: 150 }, (_, index) =>
      index < 120 ? pullRequestIssueJson(index) : issueJson(index),
    );
    serveList(fake, "/repos/octo/demo/issues", mixed);
    const host = bed.host({ apiUrl: fake.apiUrl });

    const execution = await host.executor.execute("github.issues", {
      owner: "octo",
      repo: "demo",
      limit: 20,
    });
    expect(execution.output).toMatchObject({ count: 20, truncated: true });
    expect(fake.requests).toHaveLength(2);
  });

  it("refuses a next link to another origin, so the token never goes there", async () => {
    const fake = await bed.server();
    const elsewhere = await bed.server();
    serveList(fake, "/repos/octo/demo/pulls", pullRequests(150), elsewhere.origin);
    serveList(elsewhere, "/repos/octo/demo/pulls", pullRequests(150));
    const host = bed.host({ apiUrl: fake.apiUrl, token: TOKEN });

    const execution = await listPullRequests(host, 150);
    expect(execution.status).toBe("error");
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(execution.error?.message).toContain(`points to ${elsewhere.origin}`);
    expect(elsewhere.requests).toHaveLength(0);
  });
});

describe("GithubClient requests", () => {
  it("sends the token as a Bearer header only when one is configured", async () => {
    const fake = await bed.server();
    serveJson(fake, "/repos/octo/demo", repositoryJson());
    await readRepository(bed.host({ apiUrl: fake.apiUrl, token: TOKEN }));
    await readRepository(bed.host({ apiUrl: fake.apiUrl }));

    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(fake.requests[1]?.headers.authorization).toBeUndefined();
  });

  it("revalidates with If-None-Match and serves a 304 from the cache", async () => {
    const fake = await bed.server();
    serveJson(fake, "/repos/octo/demo", repositoryJson(), '"etag-1"');
    const { logger, lines } = createCapturingLogger();
    const host = bed.host({ apiUrl: fake.apiUrl, token: TOKEN }, { logger });

    const first = await readRepository(host);
    const second = await readRepository(host);
    expect(second.status).toBe("success");
    expect(second.output).toEqual(first.output);
    expect(fake.requests[0]?.headers["if-none-match"]).toBeUndefined();
    expect(fake.requests[1]?.headers["if-none-match"]).toBe('"etag-1"');
    expect(lines).toContainEqual(
      expect.objectContaining({
        message: "github cache hit",
        fields: { url: `${fake.apiUrl}/repos/octo/demo` },
      }),
    );
  });

  it("serves a cached empty answer confirmed by a 304 as the empty answer it was", async () => {
    const fake = await bed.server();
    fake.route("/repos/octo/demo/pulls", (request, response) => {
      response.writeHead(request.headers["if-none-match"] === '"empty"' ? 304 : 200, { etag: '"empty"' });
      response.end();
    });
    const host = bed.host({ apiUrl: fake.apiUrl });

    const first = await listPullRequests(host, 10);
    const second = await listPullRequests(host, 10);

    expect(fake.requests[1]?.headers["if-none-match"]).toBe('"empty"');
    expect(first.output).toMatchObject({ items: [], truncated: false });
    expect(second.error).toBeNull();
    expect(second.output).toEqual(first.output);
  });

  it("keeps the cache apart per token and never keys it by the token itself", async () => {
    const fake = await bed.server();
    serveJson(fake, "/repos/octo/demo", repositoryJson());
    await readRepository(bed.host({ apiUrl: fake.apiUrl, token: TOKEN }));
    await readRepository(bed.host({ apiUrl: fake.apiUrl, token: "ghp_anotherToken" }));
    await readRepository(bed.host({ apiUrl: fake.apiUrl }));

    expect(fake.requests.map((request) => request.headers["if-none-match"])).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    const keys = [...githubEtagCache().keys()];
    expect(keys).toHaveLength(3);
    expect(keys.join("\n")).not.toContain(TOKEN);
  });

  it("serves cached pages with their Link headers", async () => {
    const { fake, host } = await withPullRequests(150);

    const first = await listPullRequests(host, 150);
    const again = await listPullRequests(host, 150);
    // Both pages come back as 304s; the second is reached through the first page's cached Link header.
    expect(again.output).toEqual(first.output);
    expect(again.output).toMatchObject({ count: 150, truncated: false });
    expect(fake.requests.map((request) => request.headers["if-none-match"])).toEqual([
      undefined,
      undefined,
      '"page-1-100"',
      '"page-2-100"',
    ]);
  });

  it("works under a GitHub Enterprise base path", async () => {
    const fake = await bed.server({ basePath: "/api/v3" });
    serveJson(fake, "/repos/octo/demo", repositoryJson());
    serveList(fake, "/repos/octo/demo/pulls", pullRequests(3));
    const host = bed.host({ apiUrl: `${fake.apiUrl}/` });

    const repository = await readRepository(host);
    expect(repository.output).toMatchObject({ fullName: "octo/demo" });
    const pulls = await listPullRequests(host, 1);
    expect(pulls.output).toMatchObject({ count: 1, truncated: true });
    const all = await listPullRequests(host, 3);
    expect(all.output).toMatchObject({ count: 3, truncated: false });
    expect(fake.requests.map((request) => request.path.split("?")[0])).toEqual([
      "/api/v3/repos/octo/demo",
      "/api/v3/repos/octo/demo/pulls",
      "/api/v3/repos/octo/demo/pulls",
    ]);
  });

  it("refuses a next link outside the Enterprise base path", async () => {
    const fake = await bed.server({ basePath: "/api/v3" });
    fake.route("/repos/octo/demo/pulls", (_request, response) => {
      sendJson(response, 200, [pullRequestJson(1)], { link: `<${fake.origin}/login?page=2>; rel="next"` });
    });
    const host = bed.host({ apiUrl: fake.apiUrl });

    const execution = await listPullRequests(host, 5);
    expect(execution.error?.code).toBe("URL_REFUSED");
    expect(fake.requests).toHaveLength(1);
  });

  it("follows a same-origin redirect (a renamed repository) but refuses one to another origin", async () => {
    const fake = await bed.server();
    const elsewhere = await bed.server();
    serveJson(fake, "/repositories/1296269", repositoryJson({ full_name: "octo/renamed", name: "renamed" }));
    fake.route("/repos/octo/old-name", (_request, response) => {
      response.writeHead(301, { location: `${fake.origin}/repositories/1296269` });
      response.end();
    });
    fake.route("/repos/octo/moved-away", (_request, response) => {
      response.writeHead(307, { location: `${elsewhere.origin}/repos/octo/demo` });
      response.end();
    });
    const host = bed.host({ apiUrl: fake.apiUrl, token: TOKEN });

    const renamed = await readRepository(host, "old-name");
    expect(renamed.output).toMatchObject({ fullName: "octo/renamed" });
    const refused = await readRepository(host, "moved-away");
    expect(refused.error?.code).toBe("URL_REFUSED");
    expect(elsewhere.requests).toHaveLength(0);
  });
});
