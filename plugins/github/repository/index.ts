import { z } from "zod";
import { parseGithubAnswer } from "../lib/github-shapes.js";
import { githubSkillFactory } from "../lib/github-skill-factory.js";
import { repositoryInputSchema, repositoryPath } from "../lib/input-schemas.js";

const input = repositoryInputSchema({});

const output = z.object({
  fullName: z.string().describe("owner/name"),
  owner: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  url: z.string().describe("The repository's page on GitHub"),
  homepage: z.string().nullable(),
  defaultBranch: z.string(),
  stars: z.number().int().min(0),
  forks: z.number().int().min(0),
  openIssues: z.number().int().min(0).describe("Open issues plus open pull requests, as GitHub counts them"),
  watchers: z
    .number()
    .int()
    .min(0)
    .describe("People watching (subscribers), not the legacy count equal to stars"),
  language: z.string().nullable(),
  topics: z.array(z.string()),
  license: z.object({ key: z.string(), name: z.string(), spdxId: z.string().nullable() }).nullable(),
  archived: z.boolean(),
  fork: z.boolean(),
  private: z.boolean(),
  visibility: z.string().nullable().describe("public, private or internal (Enterprise)"),
  createdAt: z.string(),
  updatedAt: z.string(),
  pushedAt: z.string().nullable(),
});

const rawRepositorySchema = z.object({
  full_name: z.string(),
  name: z.string(),
  owner: z.object({ login: z.string() }),
  description: z.string().nullable().optional(),
  html_url: z.string(),
  homepage: z.string().nullable().optional(),
  default_branch: z.string(),
  stargazers_count: z.number(),
  forks_count: z.number(),
  open_issues_count: z.number(),
  watchers_count: z.number(),
  subscribers_count: z.number().optional(),
  language: z.string().nullable().optional(),
  topics: z.array(z.string()).optional(),
  license: z
    .object({ key: z.string(), name: z.string(), spdx_id: z.string().nullable().optional() })
    .nullable()
    .optional(),
  archived: z.boolean().optional(),
  fork: z.boolean().optional(),
  private: z.boolean(),
  visibility: z.string().optional(),
  created_at: z.string(),
  updated_at: z.string(),
  pushed_at: z.string().nullable().optional(),
});

function normalize(raw: z.output<typeof rawRepositorySchema>): z.output<typeof output> {
  return {
    fullName: raw.full_name,
    owner: raw.owner.login,
    name: raw.name,
    description: raw.description ?? null,
    url: raw.html_url,
    homepage: raw.homepage || null,
    defaultBranch: raw.default_branch,
    stars: raw.stargazers_count,
    forks: raw.forks_count,
    openIssues: raw.open_issues_count,
    watchers: raw.subscribers_count ?? raw.watchers_count,
    language: raw.language ?? null,
    topics: raw.topics ?? [],
    license:
      raw.license == null
        ? null
        : { key: raw.license.key, name: raw.license.name, spdxId: raw.license.spdx_id ?? null },
    archived: raw.archived ?? false,
    fork: raw.fork ?? false,
    private: raw.private,
    visibility: raw.visibility ?? null,
    createdAt: raw.created_at,
    updatedAt: raw.updated_at,
    pushedAt: raw.pushed_at ?? null,
  };
}

/**
 * `github.repository`: a repository's key facts (stars, forks, default branch, license, topics, …)
 * from `GET /repos/{owner}/{repo}`, normalized to camelCase.
 */
export const createRepositorySkill = githubSkillFactory({
  input,
  output,
  async run({ owner, repo }, client) {
    const subject = `repository ${owner}/${repo}`;
    const answer = await client.get(repositoryPath(owner, repo), {}, subject);
    return normalize(parseGithubAnswer(rawRepositorySchema, answer.body, subject));
  },
});

/** Reads the GitHub settings from the environment on every call. */
export default createRepositorySkill();
