import { expectTraceparentOf, useRecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeGithub, sendJson, serveJson, serveList } from "./helpers/fake-github.ts";
import {
  contributorJson,
  issueJson,
  pullRequestJson,
  releaseJson,
  repositoryJson,
} from "./helpers/github-fixtures.ts";
import { MEMBERS } from "./helpers/github-host.ts";
import { createTestBed } from "./helpers/test-bed.ts";

const bed = createTestBed();
afterEach(() => bed.cleanup());

type Member = "repository" | "issues" | "pull-requests" | "releases" | "contributors" | "commit-activity";

/** What a member's call needs from the fake, and how many requests it sends. */
interface MemberCall {
  serve(fake: FakeGithub): void;
  input: Record<string, unknown>;
  requests: number;
}

/** Per member: inputs chosen so that most members send several requests. */
const CALLS: Record<Member, MemberCall> = {
  repository: {
    serve: (fake) => serveJson(fake, "/repos/octo/demo", repositoryJson()),
    input: { owner: "octo", repo: "demo" },
    requests: 1,
  },
  issues: {
    // Filtered lists ask for pages of 100: 150 issues are two pages.
    serve: (fake) =>
      serveList(
        fake,
        "/repos/octo/demo/issues",
        Array.from({ length: 150 }, (_, index) => issueJson(150 - index)),
      ),
    input: { owner: "octo", repo: "demo", limit: 120 },
    requests: 2,
  },
  "pull-requests": {
    // Pages of 100 (the most GitHub gives): 120 of 150 take two.
    serve: (fake) =>
      serveList(
        fake,
        "/repos/octo/demo/pulls",
        Array.from({ length: 150 }, (_, index) => pullRequestJson(150 - index)),
      ),
    input: { owner: "octo", repo: "demo", limit: 120 },
    requests: 2,
  },
  releases: {
    serve: (fake) => serveList(fake, "/repos/octo/demo/releases", [releaseJson(2), releaseJson(1)]),
    input: { owner: "octo", repo: "demo" },
    requests: 1,
  },
  contributors: {
    serve: (fake) => serveList(fake, "/repos/octo/demo/contributors", [contributorJson("alice", 5)]),
    input: { owner: "octo", repo: "demo" },
    requests: 1,
  },
  "commit-activity": {
    // Still computing (202) once, then the statistics: the second request is the skill's own retry.
    serve: (fake) => {
      let calls = 0;
      fake.route("/repos/octo/demo/stats/commit_activity", (_request, response) => {
        calls += 1;
        if (calls === 1) sendJson(response, 202, {});
        else sendJson(response, 200, [{ week: 1713657600, total: 1, days: [0, 1, 0, 0, 0, 0, 0] }]);
      });
    },
    input: { owner: "octo", repo: "demo" },
    requests: 2,
  },
};

async function run(member: Member) {
  const fake = await bed.server();
  CALLS[member].serve(fake);
  const host = bed.host({ apiUrl: fake.apiUrl, statsRetryDelayMs: 10 });
  const execution = await host.executor.execute(`github.${member}`, CALLS[member].input);
  expect(execution.error).toBeNull();
  return { fake, execution };
}

// First, while no SDK is installed: the file installs it once, below, and never removes it early.
describe("github skills without an OpenTelemetry SDK", () => {
  it("send no trace headers", async () => {
    const { fake, execution } = await run("pull-requests");
    expect(execution.traceId).toBeNull();
    expect(fake.requests).toHaveLength(2);
    for (const { headers } of fake.requests) expect(headers.traceparent).toBeUndefined();
  });
});

describe("github skills with an OpenTelemetry SDK", () => {
  const telemetry = useRecordingTelemetry();

  it("covers every member", () => {
    expect(Object.keys(CALLS).sort()).toEqual(Object.keys(MEMBERS).sort());
  });

  it.each(Object.keys(CALLS) as Member[])(
    "github.%s sends the execution's traceparent on every request",
    async (member) => {
      const { fake, execution } = await run(member);
      expect(fake.requests).toHaveLength(CALLS[member].requests);
      for (const { headers } of fake.requests) {
        const chain = expectTraceparentOf(telemetry, execution, headers.traceparent);
        expect(chain).toEqual(["attempt 1", `execute_tool github.${member}`]);
      }
    },
  );

  it("sends it on a revalidation the ETag cache answers too", async () => {
    const fake = await bed.server();
    CALLS.repository.serve(fake);
    const host = bed.host({ apiUrl: fake.apiUrl });
    await host.executor.execute("github.repository", CALLS.repository.input);
    const second = await host.executor.execute("github.repository", CALLS.repository.input);
    expect(second.error).toBeNull();
    const revalidation = fake.requests[1]?.headers;
    expect(revalidation?.["if-none-match"]).toBe('"v1"');
    expectTraceparentOf(telemetry, second, revalidation?.traceparent);
  });
});
