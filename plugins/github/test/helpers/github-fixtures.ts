/** GitHub-shaped JSON as the REST API returns it (trimmed, but with the raw snake_case fields and noise). */

const user = (login: string) => ({
  login,
  id: login.length,
  type: "User",
  site_admin: false,
  html_url: `https://github.com/${login}`,
  avatar_url: `https://avatars.example/${login}`,
});

export function repositoryJson(overrides: Record<string, unknown> = {}) {
  return {
    id: 1296269,
    node_id: "MDEwOlJlcG9zaXRvcnkxMjk2MjY5",
    name: "demo",
    full_name: "octo/demo",
    owner: user("octo"),
    private: false,
    html_url: "https://github.com/octo/demo",
    description: "A demo repository",
    fork: false,
    homepage: "",
    language: "TypeScript",
    forks_count: 9,
    stargazers_count: 80,
    watchers_count: 80,
    subscribers_count: 12,
    open_issues_count: 3,
    default_branch: "main",
    topics: ["skills", "demo"],
    license: { key: "mit", name: "MIT License", spdx_id: "MIT", url: "https://api.github.com/licenses/mit" },
    archived: false,
    disabled: false,
    visibility: "public",
    created_at: "2020-01-01T00:00:00Z",
    updated_at: "2024-05-01T00:00:00Z",
    pushed_at: "2024-05-02T00:00:00Z",
    ...overrides,
  };
}

export function issueJson(number: number, overrides: Record<string, unknown> = {}) {
  return {
    id: 1000 + number,
    number,
    title: `Issue ${number}`,
    state: "open",
    state_reason: null,
    user: user("alice"),
    labels: [{ id: 1, name: "bug", color: "f00" }],
    assignees: [user("bob")],
    milestone: { title: "v1" },
    comments: 2,
    locked: false,
    created_at: "2024-01-01T00:00:00Z",
    updated_at: "2024-01-02T00:00:00Z",
    closed_at: null,
    html_url: `https://github.com/octo/demo/issues/${number}`,
    body: `Body of issue ${number}`,
    ...overrides,
  };
}

/** An entry of the issues list that is really a pull request. */
export function pullRequestIssueJson(number: number) {
  return issueJson(number, {
    title: `PR ${number}`,
    pull_request: { url: `https://api.github.com/pulls/${number}` },
  });
}

export function pullRequestJson(number: number, overrides: Record<string, unknown> = {}) {
  return {
    id: 2000 + number,
    number,
    title: `Pull request ${number}`,
    state: "closed",
    draft: false,
    user: user("carol"),
    labels: [{ name: "enhancement" }],
    assignees: [],
    requested_reviewers: [user("dave")],
    base: { ref: "main", label: "octo:main", repo: { full_name: "octo/demo" } },
    head: { ref: "feature", label: "carol:feature", repo: { full_name: "carol/demo" } },
    created_at: "2024-02-01T00:00:00Z",
    updated_at: "2024-02-03T00:00:00Z",
    closed_at: "2024-02-03T00:00:00Z",
    merged_at: "2024-02-03T00:00:00Z",
    html_url: `https://github.com/octo/demo/pull/${number}`,
    body: null,
    ...overrides,
  };
}

export function releaseJson(id: number, overrides: Record<string, unknown> = {}) {
  return {
    id,
    tag_name: `v${id}.0.0`,
    name: `Release ${id}`,
    draft: false,
    prerelease: false,
    author: user("octo"),
    created_at: "2024-03-01T00:00:00Z",
    published_at: "2024-03-01T01:00:00Z",
    html_url: `https://github.com/octo/demo/releases/tag/v${id}.0.0`,
    body: "Notes",
    tarball_url: `https://api.github.com/repos/octo/demo/tarball/v${id}.0.0`,
    zipball_url: `https://api.github.com/repos/octo/demo/zipball/v${id}.0.0`,
    assets: [
      {
        name: "demo.tgz",
        size: 1024,
        download_count: 7,
        content_type: "application/gzip",
        browser_download_url: `https://github.com/octo/demo/releases/download/v${id}.0.0/demo.tgz`,
      },
    ],
    ...overrides,
  };
}

export function contributorJson(login: string, contributions: number) {
  return { ...user(login), contributions };
}

export function anonymousContributorJson(name: string, contributions: number) {
  return { type: "Anonymous", name, email: `${name}@example.com`, contributions };
}

export function commitJson(sha: string, date: string, login: string | null, name = login ?? "Someone") {
  return {
    sha,
    html_url: `https://github.com/octo/demo/commit/${sha}`,
    author: login === null ? null : user(login),
    committer: user("web-flow"),
    commit: {
      message: `Commit ${sha}\n\nLonger description`,
      author: { name, email: `${name}@example.com`, date },
      committer: { name: "GitHub", email: "noreply@github.com", date },
    },
  };
}
