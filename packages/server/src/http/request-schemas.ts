import { EXECUTION_STATUSES, type ExecutionStatus, SkillboxError } from "@skillbox/core";
import { formatZodIssues } from "@skillbox/core/internal";
import type { Context } from "hono";
import { z } from "zod";
import { requestInvalid } from "./http-error.js";
import { isoDate, wholeNumber } from "./query-values.js";

/** The largest timer Node honours; a longer `setTimeout` fires at once. */
const MAX_TIMEOUT_MS = 2_147_483_647;
const MAX_PAGE_SIZE = 1000;

/** Longest `idempotencyKey` and `sessionId` accepted. */
const MAX_IDENTIFIER_LENGTH = 200;

/** Longest `reason` and `comment` accepted: a note for a person, not a document. */
const MAX_NOTE_LENGTH = 2000;

/** Longest long-poll (`?wait=`, `Prefer: wait=`) in seconds: past a minute proxies start cutting idle requests. */
export const MAX_WAIT_SECONDS = 60;

/**
 * A caller-chosen identifier. Each check carries its own message: with only the schema-wide
 * `error`, Zod would answer "must be a string" for a string that is merely too long.
 */
const identifierSchema = z
  .string({ error: "must be a string" })
  .min(1, "must not be empty")
  .max(MAX_IDENTIFIER_LENGTH, {
    error: (issue) =>
      `must be at most ${MAX_IDENTIFIER_LENGTH} characters, got ${(issue.input as string).length}; use a shorter one (a hash of a longer one, say)`,
  });

/** Body of `POST /api/skills/:name/execute`. */
export const executeBodySchema = z.strictObject({
  /** The skill's input; omitted means `{}`. */
  input: z.unknown().optional(),
  version: z
    .string({ error: "must be a string" })
    .min(1, "must not be empty")
    .regex(/^[^@]+$/, 'must be a semver version or range without "@", such as "^1.0.0"')
    .optional(),
  idempotencyKey: identifierSchema.optional(),
  timeoutMs: z
    .number({ error: "must be a number of milliseconds" })
    .int("must be a whole number of milliseconds")
    .positive("must be positive")
    .max(MAX_TIMEOUT_MS, `must be at most ${MAX_TIMEOUT_MS}`)
    .optional(),
  sessionId: identifierSchema.optional(),
});

/** A free-text note a person writes: why they cancel or reject, what they note on an approval. */
const noteSchema = z
  .string({ error: "must be a string" })
  .min(1, "must not be empty (leave it out instead)")
  .max(MAX_NOTE_LENGTH, {
    error: (issue) =>
      `must be at most ${MAX_NOTE_LENGTH} characters, got ${(issue.input as string).length}; write a shorter note`,
  });

/** Body of `POST /api/executions/:id/cancel` (may be empty). */
export const cancelBodySchema = z.strictObject({ reason: noteSchema.optional() });

/**
 * Body of `POST /api/executions/:id/approve` (may be empty): `input` replaces the input the
 * execution runs with (validated against the skill's schema). Who approves is the caller, never
 * a field.
 */
export const approveBodySchema = z.strictObject({
  input: z.unknown().optional(),
  comment: noteSchema.optional(),
});

/** Body of `POST /api/executions/:id/reject` (may be empty). */
export const rejectBodySchema = z.strictObject({ reason: noteSchema.optional() });

/** Body of `PATCH /api/skills/:id`. */
export const patchSkillBodySchema = z.strictObject({
  enabled: z.boolean({ error: "must be true or false" }),
});

/** Query of `GET /api/skills`. */
export const listSkillsQuerySchema = z.strictObject({
  versions: z.enum(["latest", "all"], { error: 'must be "latest" or "all"' }).default("latest"),
});

/** Query of `GET /api/executions/:id`: `wait` long-polls for up to that many seconds. */
export const getExecutionQuerySchema = z.strictObject({
  wait: wholeNumber(0, MAX_WAIT_SECONDS).optional(),
});

/** Query of `GET /api/executions`. */
export const listExecutionsQuerySchema = z.strictObject({
  skill: z.string().min(1, "must not be empty").optional(),
  status: z
    .string()
    .transform((value, context) => {
      const statuses = value.split(",").map((status) => status.trim());
      const unknown = statuses.filter(
        (status) => !(EXECUTION_STATUSES as readonly string[]).includes(status),
      );
      if (unknown.length > 0) {
        context.addIssue({
          code: "custom",
          message: `must be among ${EXECUTION_STATUSES.join(", ")} (comma-separated), got ${JSON.stringify(unknown.join(","))}`,
        });
        return z.NEVER;
      }
      return statuses as ExecutionStatus[];
    })
    .optional(),
  sessionId: z.string().min(1, "must not be empty").optional(),
  since: isoDate().optional(),
  /** Executions created before this instant (with `since`: the range `[since, until)`). */
  until: isoDate().optional(),
  /** The `ctx.call` children of one execution. */
  parentExecutionId: z.string().min(1, "must not be empty").optional(),
  limit: wholeNumber(1, MAX_PAGE_SIZE).default(50),
  offset: wholeNumber(0, Number.MAX_SAFE_INTEGER).default(0),
});

/** Options of {@link readJsonBody}. */
export interface ReadJsonBodyOptions {
  /** An empty body counts as `{}` (the JSON content type is still required). */
  allowEmpty?: boolean;
}

/**
 * Reads the body as JSON and validates it. Content types other than JSON are refused (415):
 * a web page can POST `text/plain` to a local server without a CORS preflight, so accepting it
 * would let any site run skills on an unauthenticated server. That holds for an empty body
 * too: a bodiless cross-site POST needs no preflight either.
 */
export async function readJsonBody<Schema extends z.ZodType>(
  context: Context,
  schema: Schema,
  options: ReadJsonBodyOptions = {},
): Promise<z.output<Schema>> {
  const contentType = context.req.header("content-type") ?? "";
  if (!/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(contentType)) {
    throw new SkillboxError(
      "CONTENT_TYPE_INVALID",
      `${subjectOf(context)}: the body must be JSON, sent with \`Content-Type: application/json\` (got ${
        contentType === "" ? "no Content-Type" : JSON.stringify(contentType)
      })`,
    );
  }
  const text = await context.req.text();
  if (text.trim() === "" && options.allowEmpty === true) return validate(context, schema, {}, "body");
  if (text.trim() === "") {
    throw requestInvalid(`${subjectOf(context)}: the request body is empty; send a JSON object`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw requestInvalid(
      `${subjectOf(context)}: the request body is not valid JSON (${(error as Error).message})`,
    );
  }
  return validate(context, schema, body, "body");
}

/** Validates the query string; a repeated parameter counts as a comma-separated list. */
export function readQuery<Schema extends z.ZodType>(context: Context, schema: Schema): z.output<Schema> {
  const query = Object.fromEntries(
    Object.entries(context.req.queries()).map(([name, values]) => [name, values.join(",")]),
  );
  return validate(context, schema, query, "query");
}

function validate<Schema extends z.ZodType>(
  context: Context,
  schema: Schema,
  value: unknown,
  part: "body" | "query",
): z.output<Schema> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const subject = part === "body" ? `${subjectOf(context)} body` : `${subjectOf(context)} query`;
  const isWholeValue = parsed.error.issues.every(
    (issue) => issue.path.length === 0 && issue.code === "invalid_type",
  );
  throw requestInvalid(
    isWholeValue ? `${subject} must be a JSON object` : formatZodIssues(parsed.error, subject),
    {
      issues: parsed.error.issues.map((issue) => ({
        path: issue.path.map((segment) => (typeof segment === "symbol" ? String(segment) : segment)),
        message: issue.message,
      })),
    },
  );
}

function subjectOf(context: Context): string {
  return `${context.req.method} ${context.req.path}`;
}
