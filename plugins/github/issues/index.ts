import { z } from "zod";
import { collectList } from "../lib/collect-list.js";
import { labelNames, listOutputSchema, loginOf, loginsOf, rawIssueFields } from "../lib/github-shapes.js";
import { githubSkillFactory } from "../lib/github-skill-factory.js";
import {
  directionSchema,
  limitSchema,
  loginSchema,
  repositoryInputSchema,
  timestampSchema,
  toIsoTimestamp,
} from "../lib/input-schemas.js";

const input = repositoryInputSchema({
  state: z.enum(["open", "closed", "all"]).default("open"),
  labels: z
    .array(
      z
        .string()
        .min(1)
        .max(100)
        .regex(/^[^,]+$/),
    )
    .max(20)
    .optional()
    .describe("Only issues carrying all of these labels (names without commas)"),
  assignee: z
    .union([loginSchema, z.literal("*")])
    .optional()
    .describe('Assignee login, "none" for unassigned, "*" for assigned to anyone'),
  creator: loginSchema.optional().describe("Login of the issue's author"),
  mentioned: loginSchema.optional().describe("Login mentioned in the issue"),
  since: timestampSchema.optional().describe("Only issues updated at or after this time (ISO 8601)"),
  sort: z.enum(["created", "updated", "comments"]).default("created"),
  direction: directionSchema.optional(),
  limit: limitSchema(30),
});

const issueSchema = z.object({
  number: z.number().int(),
  title: z.string(),
  state: z.string().describe("open or closed"),
  stateReason: z.string().nullable().describe("completed, not_planned, reopened, or null"),
  author: z.string().nullable().describe("Login of the author (null for deleted accounts)"),
  labels: z.array(z.string()),
  assignees: z.array(z.string()),
  milestone: z.string().nullable(),
  comments: z.number().int().min(0),
  locked: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  closedAt: z.string().nullable(),
  url: z.string(),
  body: z.string().nullable(),
});

const output = listOutputSchema(issueSchema);

const rawIssueSchema = z.object({
  ...rawIssueFields,
  state_reason: z.string().nullable().optional(),
  milestone: z.object({ title: z.string() }).nullable().optional(),
  comments: z.number().optional(),
  locked: z.boolean().optional(),
});

function normalize(raw: z.output<typeof rawIssueSchema>): z.output<typeof issueSchema> {
  return {
    number: raw.number,
    title: raw.title,
    state: raw.state,
    stateReason: raw.state_reason ?? null,
    author: loginOf(raw.user),
    labels: labelNames(raw.labels ?? []),
    assignees: loginsOf(raw.assignees),
    milestone: raw.milestone?.title ?? null,
    comments: raw.comments ?? 0,
    locked: raw.locked ?? false,
    createdAt: raw.created_at,
    updatedAt: raw.updated_at,
    closedAt: raw.closed_at ?? null,
    url: raw.html_url,
    body: raw.body ?? null,
  };
}

/** GitHub's issues endpoint lists pull requests too, marked by a `pull_request` field. */
function isIssue(item: unknown): boolean {
  return typeof item !== "object" || item === null || !("pull_request" in item);
}

/**
 * `github.issues`: a repository's issues (pull requests left out) with GitHub's filters, newest
 * first by default, following pages up to `limit`.
 */
export const createIssuesSkill = githubSkillFactory({
  input,
  output,
  async run(request, client) {
    const query = {
      state: request.state,
      labels: request.labels?.join(","),
      assignee: request.assignee,
      creator: request.creator,
      mentioned: request.mentioned,
      since: request.since === undefined ? undefined : toIsoTimestamp(request.since, "since"),
      sort: request.sort,
      direction: request.direction,
    };
    return collectList(client, request, {
      path: "/issues",
      noun: "issues",
      query,
      keep: isIssue,
      rawItem: rawIssueSchema,
      normalize,
    });
  },
});

/** Reads the GitHub settings from the environment on every call. */
export default createIssuesSkill();
