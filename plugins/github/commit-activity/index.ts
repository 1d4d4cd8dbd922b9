import { SkillboxError } from "@skillbox/core/handler";
import { z } from "zod";
import { collectList } from "../lib/collect-list.js";
import type { GithubClient } from "../lib/github-client.js";
import type { GithubSettings } from "../lib/github-settings.js";
import { parseGithubAnswer } from "../lib/github-shapes.js";
import { githubSkillFactory } from "../lib/github-skill-factory.js";
import {
  limitSchema,
  refSchema,
  repositoryInputSchema,
  repositoryPath,
  timestampSchema,
  toIsoTimestamp,
} from "../lib/input-schemas.js";
import { pause } from "../lib/read-body.js";
import { countByWeek, isoDate } from "../lib/weekly-counts.js";

const input = repositoryInputSchema({
  since: timestampSchema.optional().describe("Window start (ISO 8601); switches to the commits source"),
  until: timestampSchema.optional().describe("Window end (ISO 8601); switches to the commits source"),
  author: z
    .string()
    .min(1)
    .max(254)
    .regex(/^(?:[A-Za-z0-9][A-Za-z0-9_-]*|[^\s@]+@[^\s@]+)$/)
    .optional()
    .describe("Only commits by this login or email; switches to the commits source"),
  branch: refSchema
    .optional()
    .describe("Branch (or SHA) to read instead of the default branch; switches to the commits source"),
  path: z
    .string()
    .min(1)
    .max(1024)
    .optional()
    .describe("Only commits touching this file or folder; switches to the commits source"),
  limit: limitSchema(100).describe("Most commits to read in the commits source, 1 to 1000 (default 100)"),
});

const output = z.object({
  repository: z.string(),
  source: z
    .enum(["stats", "commits"])
    .describe("stats: GitHub's weekly totals of the last year; commits: counted from the listed commits"),
  since: z.string().nullable().describe("Start of the window covered"),
  until: z.string().nullable().describe("End of the window covered"),
  totalCommits: z.number().int().min(0).describe("Sum over `weeks`"),
  weeks: z.array(
    z.object({
      weekStart: z.string().describe("The Sunday (UTC) the week starts on, YYYY-MM-DD"),
      total: z.number().int().min(0),
      days: z.array(z.number().int().min(0)).min(7).max(7).describe("Commits per weekday, Sunday first"),
    }),
  ),
  authors: z.array(
    z.object({ login: z.string().nullable(), name: z.string().nullable(), commits: z.number().int().min(1) }),
  ),
  commits: z.array(
    z.object({
      sha: z.string(),
      message: z.string().describe("First line of the commit message"),
      author: z
        .string()
        .nullable()
        .describe("GitHub login of the author (null when the email matches no account)"),
      authorName: z.string().nullable(),
      date: z.string().describe("Committer date"),
      url: z.string(),
    }),
  ),
  truncated: z
    .boolean()
    .describe("True when more commits matched than `limit`; the oldest weeks are then incomplete"),
});

type Input = z.output<typeof input>;
type Output = z.output<typeof output>;

const rawWeeksSchema = z.array(
  z.object({ week: z.number(), total: z.number(), days: z.array(z.number()).length(7) }),
);

const rawCommitSchema = z.object({
  sha: z.string(),
  html_url: z.string(),
  author: z.object({ login: z.string() }).nullable().optional(),
  commit: z.object({
    message: z.string(),
    author: z.object({ name: z.string().optional(), date: z.string().optional() }).nullable().optional(),
    committer: z.object({ date: z.string().optional() }).nullable().optional(),
  }),
});

/** Reads `/stats/commit_activity`, asking again while GitHub answers 202 (statistics still being computed). */
async function fromStatistics(
  request: Input,
  client: GithubClient,
  settings: GithubSettings,
  signal: AbortSignal,
) {
  const subject = `repository ${request.owner}/${request.repo}`;
  const path = repositoryPath(request.owner, request.repo, "/stats/commit_activity");
  for (let attempt = 1; ; attempt++) {
    const answer = await client.get(path, {}, subject);
    if (answer.status !== 202) {
      return answer.body === null
        ? []
        : parseGithubAnswer(rawWeeksSchema, answer.body, `the commit activity of ${subject}`);
    }
    if (attempt >= settings.statsAttempts) {
      throw new SkillboxError(
        "UPSTREAM_ERROR",
        `GitHub is still computing the commit statistics of ${subject} (202 Accepted after ${attempt} tries); try again in a minute, or pass \`since\` to count commits directly`,
        { retryable: true, data: { status: 202, attempts: attempt } },
      );
    }
    await pause(settings.statsRetryDelayMs, signal);
  }
}

async function statistics(
  request: Input,
  client: GithubClient,
  settings: GithubSettings,
  signal: AbortSignal,
): Promise<Output> {
  const weeks = (await fromStatistics(request, client, settings, signal)).map((week) => ({
    weekStart: isoDate(week.week * 1000),
    total: week.total,
    days: week.days,
  }));
  const first = weeks[0];
  const last = weeks.at(-1);
  return {
    repository: `${request.owner}/${request.repo}`,
    source: "stats",
    since: first === undefined ? null : `${first.weekStart}T00:00:00Z`,
    until: last === undefined ? null : `${isoDate(Date.parse(last.weekStart) + 7 * 86_400_000)}T00:00:00Z`,
    totalCommits: weeks.reduce((sum, week) => sum + week.total, 0),
    weeks,
    authors: [],
    commits: [],
    truncated: false,
  };
}

function tallyAuthors(commits: Output["commits"]): Output["authors"] {
  const byAuthor = new Map<string, Output["authors"][number]>();
  for (const commit of commits) {
    const key = commit.author !== null ? `login:${commit.author}` : `name:${commit.authorName ?? ""}`;
    const entry = byAuthor.get(key) ?? { login: commit.author, name: commit.authorName, commits: 0 };
    entry.commits += 1;
    byAuthor.set(key, entry);
  }
  return [...byAuthor.values()].sort((left, right) => right.commits - left.commits);
}

async function listedCommits(request: Input, client: GithubClient): Promise<Output> {
  const since = request.since === undefined ? undefined : toIsoTimestamp(request.since, "since");
  const until = request.until === undefined ? undefined : toIsoTimestamp(request.until, "until");
  if (since !== undefined && until !== undefined && Date.parse(since) > Date.parse(until)) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `\`since\` (${since}) is after \`until\` (${until}); swap them`,
      {
        data: { since, until },
      },
    );
  }
  const listed = await collectList(client, request, {
    path: "/commits",
    noun: "commits",
    query: { since, until, author: request.author, sha: request.branch, path: request.path },
    rawItem: rawCommitSchema,
    normalize: (raw) => ({
      sha: raw.sha,
      message: raw.commit.message.split("\n", 1)[0] ?? "",
      author: raw.author?.login ?? null,
      authorName: raw.commit.author?.name ?? null,
      date: raw.commit.committer?.date ?? raw.commit.author?.date ?? "",
      url: raw.html_url,
    }),
  });
  const commits = listed.items;
  const times = commits.map((commit) => Date.parse(commit.date)).filter((time) => !Number.isNaN(time));
  // The newest commits come first, so the window's recent end is always complete; its old end is
  // only when nothing was cut off.
  const oldest = times.length === 0 ? undefined : Math.min(...times);
  const from = listed.truncated || since === undefined ? oldest : Date.parse(since);
  const to = Math.min(until === undefined ? Date.now() : Date.parse(until), Date.now());
  const weeks = countByWeek(times, from === undefined ? undefined : { from, to: Math.max(to, from) });
  return {
    repository: `${request.owner}/${request.repo}`,
    source: "commits",
    since: since ?? null,
    until: until ?? null,
    totalCommits: times.length,
    weeks,
    authors: tallyAuthors(commits),
    commits,
    truncated: listed.truncated,
  };
}

/**
 * `github.commit-activity`: commits per week. Without a window or filter it returns GitHub's
 * statistics for the last 52 weeks of the default branch (`source: "stats"`). With `since`,
 * `until`, `author`, `branch` or `path` it lists those commits (up to `limit`) and counts them per
 * week and per author (`source: "commits"`).
 */
export const createCommitActivitySkill = githubSkillFactory({
  input,
  output,
  async run(request, client, settings, context) {
    const filtered = [request.since, request.until, request.author, request.branch, request.path].some(
      (value) => value !== undefined,
    );
    return filtered ? listedCommits(request, client) : statistics(request, client, settings, context.signal);
  },
});

/** Reads the GitHub settings from the environment on every call. */
export default createCommitActivitySkill();
