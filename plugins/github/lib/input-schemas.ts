import { SkillboxError } from "@skillbox/core/handler";
import { z } from "zod";

/**
 * GitHub user and organization names: letters, digits, hyphens (and `_` for Enterprise Managed
 * Users). No `/`, `.` or `%`, so a name can never add or climb path segments of the API URL.
 */
const ownerSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/)
  .describe("Owner (user or organization) login, e.g. octocat");

/** Repository names: letters, digits, `.`, `_`, `-`, but never `.` or `..` alone. */
const repositoryNameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^(?!\.\.?$)[A-Za-z0-9._-]+$/)
  .describe("Repository name, e.g. hello-world");

/** A user login used as a filter. */
export const loginSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/);

/** A branch or other git ref name (git's forbidden characters left out). */
export const refSchema = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^\s~^:?*[\\]+$/);

/** `2024-05-01` or `2024-05-01T12:00:00Z` (an offset instead of `Z` works too). */
export const timestampSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))?$/);

export const directionSchema = z.enum(["asc", "desc"]).describe("Sort direction (GitHub's default: desc)");

/**
 * A member's input: the repository (`owner`, `repo`) first, then the member's own `fields`, and
 * nothing else (unknown fields are refused rather than silently ignored).
 */
export function repositoryInputSchema<Fields extends z.ZodRawShape>(fields: Fields) {
  return z.object({ owner: ownerSchema, repo: repositoryNameSchema, ...fields }).strict();
}

/** How many items a list skill returns at most. */
export function limitSchema(defaultLimit: number) {
  return z
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(defaultLimit)
    .describe(
      `Most items to return, 1 to 1000 (default ${defaultLimit}); \`truncated\` says when GitHub had more`,
    );
}

/**
 * Turns an input timestamp into GitHub's ISO 8601 form (a bare date means midnight UTC), refusing
 * dates that match the pattern but do not exist (`2024-13-45`).
 */
export function toIsoTimestamp(value: string, field: string): string {
  const time = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(time)) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `\`${field}\` is not a real date: ${JSON.stringify(value)}; use e.g. "2024-05-01T00:00:00Z"`,
      {
        data: { field },
      },
    );
  }
  return new Date(time).toISOString().replace(".000Z", "Z");
}

/** The API path of a repository (names are pattern-checked; encoding is a second guard). */
export function repositoryPath(owner: string, repo: string, suffix = ""): string {
  return `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}${suffix}`;
}
