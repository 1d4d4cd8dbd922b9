import { z } from "zod";
import { collectList } from "../lib/collect-list.js";
import {
  labelNames,
  listOutputSchema,
  loginOf,
  loginsOf,
  rawIssueFields,
  rawUserListSchema,
} from "../lib/github-shapes.js";
import { githubSkillFactory } from "../lib/github-skill-factory.js";
import { directionSchema, limitSchema, refSchema, repositoryInputSchema } from "../lib/input-schemas.js";

const input = repositoryInputSchema({
  state: z.enum(["open", "closed", "all"]).default("open"),
  base: refSchema.optional().describe("Only pull requests into this branch"),
  head: z
    .string()
    .min(1)
    .max(300)
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*(?::[^\s~^:?*[\\]+)?$/)
    .optional()
    .describe('Only pull requests from this head, as "user:branch" (or "user")'),
  sort: z.enum(["created", "updated", "popularity", "long-running"]).default("created"),
  direction: directionSchema.optional(),
  limit: limitSchema(30),
});

const pullRequestSchema = z.object({
  number: z.number().int(),
  title: z.string(),
  state: z.string().describe("open or closed"),
  draft: z.boolean(),
  merged: z.boolean(),
  author: z.string().nullable(),
  labels: z.array(z.string()),
  assignees: z.array(z.string()),
  requestedReviewers: z.array(z.string()),
  base: z.string().describe("Target branch"),
  head: z.string().describe("Source branch"),
  headRepository: z.string().nullable().describe("owner/name of the source (null when a fork was deleted)"),
  createdAt: z.string(),
  updatedAt: z.string(),
  closedAt: z.string().nullable(),
  mergedAt: z.string().nullable(),
  url: z.string(),
  body: z.string().nullable(),
});

const output = listOutputSchema(pullRequestSchema);

const rawPullRequestSchema = z.object({
  ...rawIssueFields,
  draft: z.boolean().optional(),
  requested_reviewers: rawUserListSchema,
  base: z.object({ ref: z.string() }),
  head: z.object({ ref: z.string(), repo: z.object({ full_name: z.string() }).nullable().optional() }),
  merged_at: z.string().nullable().optional(),
});

function normalize(raw: z.output<typeof rawPullRequestSchema>): z.output<typeof pullRequestSchema> {
  return {
    number: raw.number,
    title: raw.title,
    state: raw.state,
    draft: raw.draft ?? false,
    merged: raw.merged_at != null,
    author: loginOf(raw.user),
    labels: labelNames(raw.labels ?? []),
    assignees: loginsOf(raw.assignees),
    requestedReviewers: loginsOf(raw.requested_reviewers),
    base: raw.base.ref,
    head: raw.head.ref,
    headRepository: raw.head.repo?.full_name ?? null,
    createdAt: raw.created_at,
    updatedAt: raw.updated_at,
    closedAt: raw.closed_at ?? null,
    mergedAt: raw.merged_at ?? null,
    url: raw.html_url,
    body: raw.body ?? null,
  };
}

/** `github.pull-requests`: a repository's pull requests filtered by state, base and head, up to `limit`. */
export const createPullRequestsSkill = githubSkillFactory({
  input,
  output,
  async run(request, client) {
    const query = {
      state: request.state,
      base: request.base,
      head: request.head,
      sort: request.sort,
      direction: request.direction,
    };
    return collectList(client, request, {
      path: "/pulls",
      noun: "pull requests",
      query,
      rawItem: rawPullRequestSchema,
      normalize,
    });
  },
});

/** Reads the GitHub settings from the environment on every call. */
export default createPullRequestsSkill();
