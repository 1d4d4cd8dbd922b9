import { afterEach, describe, expect, it } from "vitest";
import { type FakeRoute, sendJson, serveList } from "./helpers/fake-github.ts";
import { commitJson } from "./helpers/github-fixtures.ts";
import { createTestBed } from "./helpers/test-bed.ts";

const bed = createTestBed();
afterEach(() => bed.cleanup());

/** Two weeks of GitHub's `stats/commit_activity` (weeks start on Sunday, as epoch seconds). */
const STATISTICS = [
  { week: Date.parse("2024-04-21T00:00:00Z") / 1000, total: 3, days: [0, 1, 2, 0, 0, 0, 0] },
  { week: Date.parse("2024-04-28T00:00:00Z") / 1000, total: 1, days: [0, 0, 0, 0, 0, 1, 0] },
];

const computing: FakeRoute = (_request, response) => sendJson(response, 202, {});

describe("github.commit-activity", () => {
  it("asks again while GitHub computes the statistics (202), then returns the weeks", async () => {
    const fake = await bed.server();
    let calls = 0;
    fake.route("/repos/octo/demo/stats/commit_activity", (request, response, url) => {
      calls += 1;
      if (calls < 3) computing(request, response, url);
      else sendJson(response, 200, STATISTICS);
    });
    const host = bed.host({ apiUrl: fake.apiUrl, statsRetryDelayMs: 10 });

    const execution = await host.executor.execute("github.commit-activity", { owner: "octo", repo: "demo" });
    expect(execution.error).toBeNull();
    expect(execution.output).toEqual({
      repository: "octo/demo",
      source: "stats",
      since: "2024-04-21T00:00:00Z",
      until: "2024-05-05T00:00:00Z",
      totalCommits: 4,
      weeks: [
        { weekStart: "2024-04-21", total: 3, days: [0, 1, 2, 0, 0, 0, 0] },
        { weekStart: "2024-04-28", total: 1, days: [0, 0, 0, 0, 0, 1, 0] },
      ],
      authors: [],
      commits: [],
      truncated: false,
    });
    expect(fake.requests).toHaveLength(3);
  });

  it("gives up with a retryable UPSTREAM_ERROR when GitHub keeps answering 202", async () => {
    const fake = await bed.server();
    fake.route("/repos/octo/demo/stats/commit_activity", computing);
    const host = bed.host({ apiUrl: fake.apiUrl, statsAttempts: 2, statsRetryDelayMs: 10 });

    const execution = await host.executor.execute("github.commit-activity", { owner: "octo", repo: "demo" });
    expect(execution.error).toMatchObject({ code: "UPSTREAM_ERROR", data: { status: 202, attempts: 2 } });
    expect(execution.error?.message).toContain(
      "still computing the commit statistics of repository octo/demo",
    );
    expect(fake.requests).toHaveLength(2);
  });

  it("stops asking when the execution times out during the pause between attempts", async () => {
    const fake = await bed.server();
    fake.route("/repos/octo/demo/stats/commit_activity", computing);
    const host = bed.host({ apiUrl: fake.apiUrl, statsAttempts: 5, statsRetryDelayMs: 20_000 });

    const execution = await host.executor.execute(
      "github.commit-activity",
      { owner: "octo", repo: "demo" },
      { timeoutMs: 300 },
    );
    expect(execution.status).toBe("timeout");
    expect(fake.requests).toHaveLength(1);
  });

  it("counts the commits of a window per week and per author", async () => {
    const fake = await bed.server();
    serveList(fake, "/repos/octo/demo/commits", [
      commitJson("c3", "2024-05-02T10:00:00Z", "alice"),
      commitJson("c2", "2024-04-30T10:00:00Z", null, "Anonymous Andy"),
      commitJson("c1", "2024-04-22T10:00:00Z", "alice"),
    ]);
    const host = bed.host({ apiUrl: fake.apiUrl });

    const execution = await host.executor.execute("github.commit-activity", {
      owner: "octo",
      repo: "demo",
      since: "2024-04-14",
      until: "2024-05-04T23:59:59Z",
      branch: "main",
    });
    expect(execution.error).toBeNull();
    expect(execution.output).toEqual({
      repository: "octo/demo",
      source: "commits",
      since: "2024-04-14T00:00:00Z",
      until: "2024-05-04T23:59:59Z",
      totalCommits: 3,
      weeks: [
        { weekStart: "2024-04-14", total: 0, days: [0, 0, 0, 0, 0, 0, 0] },
        { weekStart: "2024-04-21", total: 1, days: [0, 1, 0, 0, 0, 0, 0] },
        { weekStart: "2024-04-28", total: 2, days: [0, 0, 1, 0, 1, 0, 0] },
      ],
      authors: [
        { login: "alice", name: "alice", commits: 2 },
        { login: null, name: "Anonymous Andy", commits: 1 },
      ],
      commits: [
        {
          sha: "c3",
          message: "Commit c3",
          author: "alice",
          authorName: "alice",
          date: "2024-05-02T10:00:00Z",
          url: "https://github.com/octo/demo/commit/c3",
        },
        expect.objectContaining({ sha: "c2", author: null, authorName: "Anonymous Andy" }),
        expect.objectContaining({ sha: "c1" }),
      ],
      truncated: false,
    });
    const query = Object.fromEntries(new URL(fake.requests[0]!.path, fake.origin).searchParams);
    expect(query).toEqual({
      since: "2024-04-14T00:00:00Z",
      until: "2024-05-04T23:59:59Z",
      sha: "main",
      per_page: "100",
    });
  });

  it("filters by author and reports truncated when more commits match than the limit", async () => {
    const fake = await bed.server();
    serveList(
      fake,
      "/repos/octo/demo/commits",
      Array.from({ length: 5 }, (_, index) =>
        commitJson(`c${index}`, `2024-05-0${5 - index}T10:00:00Z`, "alice"),
      ),
    );
    const host = bed.host({ apiUrl: fake.apiUrl });

    const execution = await host.executor.execute("github.commit-activity", {
      owner: "octo",
      repo: "demo",
      author: "alice",
      limit: 2,
    });
    expect(execution.output).toMatchObject({ source: "commits", totalCommits: 2, truncated: true });
    expect(fake.requests[0]?.path).toContain("author=alice");
  });

  it("refuses a window whose start is after its end", async () => {
    const fake = await bed.server();
    const host = bed.host({ apiUrl: fake.apiUrl });

    const execution = await host.executor.execute("github.commit-activity", {
      owner: "octo",
      repo: "demo",
      since: "2024-06-01",
      until: "2024-05-01",
    });
    expect(execution.error?.code).toBe("INPUT_INVALID");
    expect(fake.requests).toHaveLength(0);
  });
});
