import { z } from "zod";
import { collectList } from "../lib/collect-list.js";
import { listOutputSchema } from "../lib/github-shapes.js";
import { githubSkillFactory } from "../lib/github-skill-factory.js";
import { limitSchema, repositoryInputSchema } from "../lib/input-schemas.js";

const input = repositoryInputSchema({
  limit: limitSchema(30),
  includeAnonymous: z
    .boolean()
    .default(false)
    .describe("Also list commit authors without a GitHub account (by name and email)"),
});

const contributorSchema = z.object({
  login: z.string().nullable().describe("null for anonymous contributors"),
  name: z.string().nullable().describe("Set for anonymous contributors only"),
  email: z.string().nullable().describe("Set for anonymous contributors only"),
  type: z.string().describe("User, Bot, Organization or Anonymous"),
  contributions: z.number().int().min(0).describe("Commits on the default branch"),
  url: z.string().nullable().describe("Profile page (null for anonymous contributors)"),
  avatarUrl: z.string().nullable(),
});

const output = listOutputSchema(contributorSchema);

const rawContributorSchema = z.object({
  login: z.string().optional(),
  name: z.string().nullable().optional(),
  email: z.string().nullable().optional(),
  type: z.string(),
  contributions: z.number(),
  html_url: z.string().optional(),
  avatar_url: z.string().optional(),
});

function normalize(raw: z.output<typeof rawContributorSchema>): z.output<typeof contributorSchema> {
  return {
    login: raw.login ?? null,
    name: raw.name ?? null,
    email: raw.email ?? null,
    type: raw.type,
    contributions: raw.contributions,
    url: raw.html_url ?? null,
    avatarUrl: raw.avatar_url ?? null,
  };
}

/**
 * `github.contributors`: who committed most to the default branch, in GitHub's order (most
 * contributions first). An empty repository gives an empty list.
 */
export const createContributorsSkill = githubSkillFactory({
  input,
  output,
  async run(request, client) {
    return collectList(client, request, {
      path: "/contributors",
      noun: "contributors",
      query: { anon: request.includeAnonymous ? "1" : undefined },
      rawItem: rawContributorSchema,
      normalize,
    });
  },
});

/** Reads the GitHub settings from the environment on every call. */
export default createContributorsSkill();
