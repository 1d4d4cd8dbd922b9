import { isDefinedSkill } from "@skillbox/core";
import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import defaultRepositorySkill from "../repository/index.ts";
import { type FakeGithub, serveJson, serveList } from "./helpers/fake-github.ts";
import {
  anonymousContributorJson,
  contributorJson,
  issueJson,
  pullRequestIssueJson,
  pullRequestJson,
  releaseJson,
  repositoryJson,
} from "./helpers/github-fixtures.ts";
import { MEMBERS, readManifest } from "./helpers/github-host.ts";
import { createTestBed } from "./helpers/test-bed.ts";

const bed = createTestBed();
afterEach(() => bed.cleanup());

async function setup(): Promise<{ fake: FakeGithub; host: TemporaryHost }> {
  const fake = await bed.server();
  return { fake, host: bed.host({ apiUrl: fake.apiUrl }) };
}

describe("github bundle members", () => {
  it.each(Object.keys(MEMBERS))("%s declares the same schemas in code as in skill.json", (folder) => {
    const manifest = readManifest(folder);
    const skill = MEMBERS[folder]!();
    expect(isDefinedSkill(skill)).toBe(true);
    expect(manifest.name).toMatch(/^github\./);
    expect(skill.input).toMatchObject(manifest.input ?? {});
    expect(skill.output).toMatchObject(manifest.output ?? {});
    expect(manifest.timeoutMs).toBeGreaterThanOrEqual(30_000);
  });

  it("default-exports skills that read their settings from the environment", () => {
    expect(isDefinedSkill(defaultRepositorySkill)).toBe(true);
  });
});

describe("github.repository", () => {
  it("returns the normalized repository", async () => {
    const { fake, host } = await setup();
    serveJson(fake, "/repos/octo/demo", repositoryJson());
    const execution = await host.executor.execute("github.repository", { owner: "octo", repo: "demo" });
    expect(execution.error).toBeNull();
    expect(execution.output).toEqual({
      fullName: "octo/demo",
      owner: "octo",
      name: "demo",
      description: "A demo repository",
      url: "https://github.com/octo/demo",
      homepage: null,
      defaultBranch: "main",
      stars: 80,
      forks: 9,
      openIssues: 3,
      watchers: 12,
      language: "TypeScript",
      topics: ["skills", "demo"],
      license: { key: "mit", name: "MIT License", spdxId: "MIT" },
      archived: false,
      fork: false,
      private: false,
      visibility: "public",
      createdAt: "2020-01-01T00:00:00Z",
      updatedAt: "2024-05-01T00:00:00Z",
      pushedAt: "2024-05-02T00:00:00Z",
    });
    expect(fake.requests[0]?.headers).toMatchObject({
      accept: "application/vnd.github+json",
      "x-github-api-version": "2022-11-28",
      "user-agent": "skillbox-github-skills",
    });
  });

  it.each([
    ["an owner with a slash", { owner: "octo/../admin", repo: "demo" }],
    ["an owner with an encoded slash", { owner: "octo%2f..", repo: "demo" }],
    ["a repository named ..", { owner: "octo", repo: ".." }],
    ["a repository with a query", { owner: "octo", repo: "demo?x=1" }],
    ["an unknown field", { owner: "octo", repo: "demo", extra: true }],
  ])("refuses %s with INPUT_INVALID before any request", async (_name, input) => {
    const { fake, host } = await setup();
    const execution = await host.executor.execute("github.repository", input);
    expect(execution.error?.code).toBe("INPUT_INVALID");
    expect(fake.requests).toHaveLength(0);
  });
});

describe("github.issues", () => {
  it("passes the filters to GitHub and leaves pull requests out", async () => {
    const { fake, host } = await setup();
    serveList(fake, "/repos/octo/demo/issues", [issueJson(5), pullRequestIssueJson(4), issueJson(3)]);
    const execution = await host.executor.execute("github.issues", {
      owner: "octo",
      repo: "demo",
      state: "all",
      labels: ["bug", "help wanted"],
      assignee: "*",
      creator: "alice",
      mentioned: "bob",
      since: "2024-01-01",
      sort: "updated",
      direction: "asc",
    });
    expect(execution.error).toBeNull();
    const output = execution.output as { items: { number: number }[]; count: number; truncated: boolean };
    expect(output.items.map((issue) => issue.number)).toEqual([5, 3]);
    expect(output).toMatchObject({ repository: "octo/demo", count: 2, truncated: false });
    expect(output.items[0]).toEqual({
      number: 5,
      title: "Issue 5",
      state: "open",
      stateReason: null,
      author: "alice",
      labels: ["bug"],
      assignees: ["bob"],
      milestone: "v1",
      comments: 2,
      locked: false,
      createdAt: "2024-01-01T00:00:00Z",
      updatedAt: "2024-01-02T00:00:00Z",
      closedAt: null,
      url: "https://github.com/octo/demo/issues/5",
      body: "Body of issue 5",
    });
    const query = new URL(fake.requests[0]!.path, fake.origin).searchParams;
    expect(Object.fromEntries(query)).toEqual({
      state: "all",
      labels: "bug,help wanted",
      assignee: "*",
      creator: "alice",
      mentioned: "bob",
      since: "2024-01-01T00:00:00Z",
      sort: "updated",
      direction: "asc",
      per_page: "100",
    });
  });

  it("refuses a date that does not exist", async () => {
    const { fake, host } = await setup();
    const execution = await host.executor.execute("github.issues", {
      owner: "o",
      repo: "r",
      since: "2024-13-45",
    });
    expect(execution.error).toMatchObject({
      code: "INPUT_INVALID",
      message: expect.stringContaining("`since`"),
    });
    expect(fake.requests).toHaveLength(0);
  });
});

describe("github.pull-requests", () => {
  it("lists pull requests with base and head filters", async () => {
    const { fake, host } = await setup();
    serveList(fake, "/repos/octo/demo/pulls", [
      pullRequestJson(7),
      pullRequestJson(6, { merged_at: null, draft: true }),
    ]);
    const execution = await host.executor.execute("github.pull-requests", {
      owner: "octo",
      repo: "demo",
      state: "closed",
      base: "main",
      head: "carol:feature",
      limit: 5,
    });
    expect(execution.error).toBeNull();
    const output = execution.output as { items: Record<string, unknown>[]; count: number };
    expect(output.count).toBe(2);
    expect(output.items[0]).toMatchObject({
      number: 7,
      merged: true,
      draft: false,
      author: "carol",
      labels: ["enhancement"],
      requestedReviewers: ["dave"],
      base: "main",
      head: "feature",
      headRepository: "carol/demo",
      mergedAt: "2024-02-03T00:00:00Z",
    });
    expect(output.items[1]).toMatchObject({ number: 6, merged: false, draft: true, mergedAt: null });
    expect(fake.requests[0]?.path).toBe(
      "/repos/octo/demo/pulls?state=closed&base=main&head=carol%3Afeature&sort=created&per_page=5",
    );
  });
});

describe("github.releases", () => {
  it("leaves drafts out by default and pre-releases out on request", async () => {
    const { fake, host } = await setup();
    serveList(fake, "/repos/octo/demo/releases", [
      releaseJson(3, { draft: true, published_at: null }),
      releaseJson(2, { prerelease: true }),
      releaseJson(1),
    ]);
    const byDefault = await host.executor.execute("github.releases", { owner: "octo", repo: "demo" });
    expect(
      (byDefault.output as { items: { tagName: string }[] }).items.map((release) => release.tagName),
    ).toEqual(["v2.0.0", "v1.0.0"]);
    const stable = await host.executor.execute("github.releases", {
      owner: "octo",
      repo: "demo",
      includePrereleases: false,
    });
    const items = (stable.output as { items: Record<string, unknown>[] }).items;
    expect(items).toEqual([
      {
        id: 1,
        tagName: "v1.0.0",
        name: "Release 1",
        draft: false,
        prerelease: false,
        author: "octo",
        createdAt: "2024-03-01T00:00:00Z",
        publishedAt: "2024-03-01T01:00:00Z",
        url: "https://github.com/octo/demo/releases/tag/v1.0.0",
        body: "Notes",
        tarballUrl: "https://api.github.com/repos/octo/demo/tarball/v1.0.0",
        zipballUrl: "https://api.github.com/repos/octo/demo/zipball/v1.0.0",
        assets: [
          {
            name: "demo.tgz",
            size: 1024,
            downloadCount: 7,
            contentType: "application/gzip",
            url: "https://github.com/octo/demo/releases/download/v1.0.0/demo.tgz",
          },
        ],
      },
    ]);
    const everything = await host.executor.execute("github.releases", {
      owner: "octo",
      repo: "demo",
      includeDrafts: true,
    });
    expect((everything.output as { count: number }).count).toBe(3);
  });
});

describe("github.contributors", () => {
  it("lists contributors, with anonymous ones on request", async () => {
    const { fake, host } = await setup();
    serveList(fake, "/repos/octo/demo/contributors", [
      contributorJson("alice", 50),
      anonymousContributorJson("ghost", 3),
    ]);
    const execution = await host.executor.execute("github.contributors", {
      owner: "octo",
      repo: "demo",
      includeAnonymous: true,
    });
    expect(execution.output).toEqual({
      repository: "octo/demo",
      items: [
        {
          login: "alice",
          name: null,
          email: null,
          type: "User",
          contributions: 50,
          url: "https://github.com/alice",
          avatarUrl: "https://avatars.example/alice",
        },
        {
          login: null,
          name: "ghost",
          email: "ghost@example.com",
          type: "Anonymous",
          contributions: 3,
          url: null,
          avatarUrl: null,
        },
      ],
      count: 2,
      truncated: false,
    });
    expect(fake.requests[0]?.path).toBe("/repos/octo/demo/contributors?anon=1&per_page=30");
  });

  it("answers an empty list for an empty repository (204)", async () => {
    const { fake, host } = await setup();
    fake.route("/repos/octo/empty/contributors", (_request, response) => {
      response.writeHead(204);
      response.end();
    });
    const execution = await host.executor.execute("github.contributors", { owner: "octo", repo: "empty" });
    expect(execution.output).toEqual({ repository: "octo/empty", items: [], count: 0, truncated: false });
  });
});
