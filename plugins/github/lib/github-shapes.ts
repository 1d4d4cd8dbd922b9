import { SkillboxError } from "@skillbox/core/handler";
import { z } from "zod";

/** A user as GitHub embeds it; `null` for deleted accounts ("ghost"). */
export const rawUserSchema = z.object({ login: z.string() }).nullable().optional();

/** Users GitHub lists (assignees, requested reviewers); missing or `null` means none. */
export const rawUserListSchema = z
  .array(z.object({ login: z.string() }))
  .nullable()
  .optional();

/** Labels come as objects in issues and pull requests (plain strings are accepted too). */
export const rawLabelSchema = z.union([z.string(), z.object({ name: z.string() })]);

/**
 * The fields GitHub's issues and pull requests share (a pull request is an issue with a branch),
 * to spread into each one's raw schema.
 */
export const rawIssueFields = {
  number: z.number(),
  title: z.string(),
  state: z.string(),
  user: rawUserSchema,
  labels: z.array(rawLabelSchema).optional(),
  assignees: rawUserListSchema,
  created_at: z.string(),
  updated_at: z.string(),
  closed_at: z.string().nullable().optional(),
  html_url: z.string(),
  body: z.string().nullable().optional(),
};

/** The login of an embedded user, or `null`. */
export function loginOf(user: z.output<typeof rawUserSchema>): string | null {
  return user?.login ?? null;
}

/** The logins of listed users (none when GitHub left the list out). */
export function loginsOf(users: z.output<typeof rawUserListSchema>): string[] {
  return (users ?? []).map((user) => user.login);
}

/** The names of embedded labels. */
export function labelNames(labels: z.output<typeof rawLabelSchema>[]): string[] {
  return labels.map((label) => (typeof label === "string" ? label : label.name));
}

/**
 * Checks GitHub's JSON against the fields a skill reads, so a surprising answer (a proxy's page,
 * an API change) fails with a clear `UPSTREAM_ERROR` instead of a `TypeError` deep in a mapper.
 */
export function parseGithubAnswer<Schema extends z.ZodType>(
  schema: Schema,
  body: unknown,
  what: string,
): z.output<Schema> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`;
  throw new SkillboxError(
    "UPSTREAM_ERROR",
    `GitHub's answer for ${what} does not have the expected shape${where}: ${issue?.message ?? "invalid"}`,
    { retryable: false, data: { what } },
  );
}

/** The output of every list skill: the items, how many, and whether GitHub had more. */
export function listOutputSchema<Item extends z.ZodType>(item: Item) {
  return z.object({
    repository: z.string().describe("owner/name the list belongs to"),
    items: z.array(item),
    count: z.number().int().min(0).describe("Number of items returned"),
    truncated: z.boolean().describe("True when GitHub had more items than `limit` let through"),
  });
}
