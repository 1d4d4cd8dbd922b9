import { afterEach, describe, expect, it } from "vitest";
import { parseGithubSettings, readGithubSettings } from "../lib/github-settings.ts";
import defaultRepositorySkill, { createRepositorySkill } from "../repository/index.ts";
import { serveJson } from "./helpers/fake-github.ts";
import { repositoryJson } from "./helpers/github-fixtures.ts";
import { readManifest } from "./helpers/github-host.ts";
import { createTestBed } from "./helpers/test-bed.ts";

const bed = createTestBed();
afterEach(() => bed.cleanup());

const SECRET = "ghp_settingsSecret";

describe("readGithubSettings", () => {
  it("uses the defaults when nothing is set", () => {
    expect(readGithubSettings({})).toEqual({
      token: undefined,
      apiUrl: "https://api.github.com",
      rateLimitMaxWaitMs: 10_000,
      userAgent: "skillbox-github-skills",
      statsAttempts: 4,
      statsRetryDelayMs: 2_000,
    });
  });

  it("prefers SKILLBOX_GITHUB_TOKEN over GITHUB_TOKEN and ignores empty values", () => {
    expect(readGithubSettings({ SKILLBOX_GITHUB_TOKEN: "ghp_a", GITHUB_TOKEN: "ghp_b" }).token).toBe("ghp_a");
    expect(readGithubSettings({ SKILLBOX_GITHUB_TOKEN: " ", GITHUB_TOKEN: "ghp_b\n" }).token).toBe("ghp_b");
  });

  it("reads an Enterprise API URL and the numeric settings", () => {
    const settings = readGithubSettings({
      SKILLBOX_GITHUB_API_URL: "https://ghe.example.com/api/v3/",
      SKILLBOX_GITHUB_RATE_LIMIT_MAX_WAIT_MS: "0",
      SKILLBOX_GITHUB_USER_AGENT: "acme-bot/1.0",
      SKILLBOX_GITHUB_STATS_ATTEMPTS: "2",
      SKILLBOX_GITHUB_STATS_RETRY_DELAY_MS: "500",
    });
    expect(settings).toMatchObject({
      apiUrl: "https://ghe.example.com/api/v3",
      rateLimitMaxWaitMs: 0,
      userAgent: "acme-bot/1.0",
      statsAttempts: 2,
      statsRetryDelayMs: 500,
    });
  });

  it.each([
    [{ SKILLBOX_GITHUB_API_URL: "api.github.com" }, "SKILLBOX_GITHUB_API_URL must be an absolute URL"],
    [{ SKILLBOX_GITHUB_API_URL: "ftp://ghe.example" }, "SKILLBOX_GITHUB_API_URL must use https:"],
    [{ SKILLBOX_GITHUB_API_URL: "https://user:pw@ghe.example" }, "must not carry credentials"],
    [
      { SKILLBOX_GITHUB_RATE_LIMIT_MAX_WAIT_MS: "soon" },
      'SKILLBOX_GITHUB_RATE_LIMIT_MAX_WAIT_MS must be a number, got "soon"',
    ],
    [{ SKILLBOX_GITHUB_STATS_ATTEMPTS: "0" }, "SKILLBOX_GITHUB_STATS_ATTEMPTS must be at least 1"],
  ])("refuses %o with CONFIG_INVALID naming the variable", (env, message) => {
    expect(() => readGithubSettings(env)).toThrow(
      expect.objectContaining({ code: "CONFIG_INVALID", message: expect.stringContaining(message) }),
    );
  });

  it("refuses a token that could not travel in a header without showing it", () => {
    let thrown: unknown;
    try {
      readGithubSettings({ SKILLBOX_GITHUB_TOKEN: "ghp_one two" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: "CONFIG_INVALID" });
    expect((thrown as Error).message).toContain("SKILLBOX_GITHUB_TOKEN (or GITHUB_TOKEN)");
    expect(
      JSON.stringify({ message: (thrown as Error).message, data: (thrown as { data: unknown }).data }),
    ).not.toContain("two");
  });
});

describe("parseGithubSettings", () => {
  it("takes defaults, not the environment, for fields left out", () => {
    expect(parseGithubSettings({ token: SECRET })).toMatchObject({
      token: SECRET,
      apiUrl: "https://api.github.com",
    });
  });

  it("names the option in CONFIG_INVALID, at factory time", () => {
    expect(() => createRepositorySkill({ apiUrl: "nope" })).toThrow(
      /github settings `apiUrl` must be an absolute URL/,
    );
  });
});

describe("default export", () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const name of ["SKILLBOX_GITHUB_TOKEN", "GITHUB_TOKEN", "SKILLBOX_GITHUB_API_URL"]) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it("reads the environment on every call, so a changed token applies without a reload", async () => {
    const fake = await bed.server();
    serveJson(fake, "/repos/octo/demo", repositoryJson());
    const host = bed.host({ apiUrl: fake.apiUrl });
    host.registry.register({
      ...readManifest("repository"),
      version: "2.0.0",
      handler: "from-env",
      apiKeyId: "system",
    });
    host.executor.registerHandler("from-env", defaultRepositorySkill.handler);

    process.env.SKILLBOX_GITHUB_API_URL = fake.apiUrl;
    process.env.SKILLBOX_GITHUB_TOKEN = "ghp_first";
    await host.executor.execute("github.repository@2", { owner: "octo", repo: "demo" });
    process.env.SKILLBOX_GITHUB_TOKEN = "ghp_second";
    await host.executor.execute("github.repository@2", { owner: "octo", repo: "demo" });
    process.env.SKILLBOX_GITHUB_API_URL = "not a url";
    const broken = await host.executor.execute("github.repository@2", { owner: "octo", repo: "demo" });

    expect(fake.requests.map((request) => request.headers.authorization)).toEqual([
      "Bearer ghp_first",
      "Bearer ghp_second",
    ]);
    expect(broken.error).toMatchObject({
      code: "CONFIG_INVALID",
      message: expect.stringContaining("SKILLBOX_GITHUB_API_URL"),
    });
  });
});
