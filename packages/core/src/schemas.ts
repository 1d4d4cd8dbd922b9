import { isAbsolute } from "node:path";
import semver from "semver";
import { z } from "zod";
import { findJsonSchemaProblem } from "./executor/schema-validator.js";

/** Skill names: optional npm-style scope, then letters, digits, `.`, `_`, `-` (no `@`, which separates the version range). */
export const SKILL_NAME_PATTERN = /^(@[a-z0-9][\w.-]*\/)?[a-zA-Z0-9][\w.-]*$/;

// Compiled as the executor compiles it: a schema Ajv refuses would fail every call as INPUT_INVALID.
const jsonSchema = z
  .record(z.string(), z.unknown(), { error: "must be a JSON Schema object" })
  .superRefine((schema, context) => {
    const problem = findJsonSchemaProblem(schema);
    if (problem !== undefined)
      context.addIssue({ code: "custom", message: `is not a valid JSON Schema (${problem})` });
  });

/** Zod schema of a retry policy (all fields optional; defaults are applied by the executor). */
export const retryPolicySchema = z
  .object({
    maxAttempts: z.number().int().min(1).max(100),
    initialDelayMs: z.number().min(0),
    backoffCoefficient: z.number().min(1),
    maxDelayMs: z.number().min(0),
    jitter: z.number().min(0).max(1),
    nonRetryableCodes: z.array(z.string()),
  })
  .partial()
  .strict();

/** Zod schema of a skill's sandbox block. */
export const sandboxSettingsSchema = z
  .object({
    image: z.string().min(1).optional(),
    command: z.array(z.string()).optional(),
    memoryMb: z.number().positive().optional(),
    cpus: z.number().positive().optional(),
    pidsLimit: z.number().int().positive().optional(),
    network: z.boolean().optional(),
    warmPool: z.number().int().min(0).max(64).optional(),
  })
  .loose()
  .refine(
    (sandbox) => sandbox.command === undefined || sandbox.command.length === 0 || sandbox.image !== undefined,
    {
      path: ["image"],
      message: "must name the image to run `sandbox.command` in",
    },
  );

/** Zod schema of a skill's code location (`Skill.code`), written by loaders. */
export const skillCodeSchema = z
  .object({
    modulePath: z
      .string({ error: "must be the absolute path of the handler module" })
      .refine((value) => isAbsolute(value), {
        error: (issue) =>
          `must be an absolute path of the handler module, got ${JSON.stringify(issue.input)}`,
      }),
    codeHash: z
      .string({ error: "must be a string" })
      .min(1, "must be a non-empty hash of the package's files"),
    root: z
      .string({ error: "must be the absolute path of the folder the code may reach" })
      .refine((value) => isAbsolute(value), {
        error: (issue) =>
          `must be an absolute path of the folder the code may reach, got ${JSON.stringify(issue.input)}`,
      }),
  })
  .strict();

/** The fields of a skill's durable side, shared by `register()` and the manifests. */
export const durableSkillFields = {
  approval: z
    .literal("required", { error: 'must be "required" (or left out when no approval is needed)' })
    .optional(),
  approvalTimeoutMs: z
    .number({ error: "must be a number of milliseconds" })
    .int("must be a whole number of milliseconds")
    .positive("must be a positive number of milliseconds")
    .optional(),
  concurrency: z
    .number({ error: "must be a number of executions" })
    .int("must be a whole number of executions")
    .min(1, "must be at least 1")
    .max(10_000, "must be at most 10000")
    .optional(),
  idempotent: z.boolean({ error: "must be true or false" }).optional(),
  queue: z
    .string({ error: "must be a queue name" })
    .regex(
      /^[a-z0-9][a-z0-9-]{0,63}$/,
      'must be a queue name of lowercase letters, digits and "-" (at most 64), such as "sandbox"',
    )
    .optional(),
};

/** Zod schema of one entry of a skill's `examples`. */
export const skillExampleSchema = z
  .object({ description: z.string().optional(), input: z.unknown(), output: z.unknown().optional() })
  .strict();

/**
 * Zod schema of what `register()` accepts. Schemas may be given as `schema: { input, output }`
 * (as in the reference) or as top-level `input` / `output` (as in manifests).
 */
export const skillRegistrationSchema = z
  .object({
    name: z
      .string({ error: "must be a string" })
      .regex(SKILL_NAME_PATTERN, 'must be a skill name such as "echo" or "@acme/weather"'),
    version: z.string({ error: "must be a string" }).refine((value) => semver.valid(value) !== null, {
      error: (issue) => `must be a semver version such as "1.0.0", got ${JSON.stringify(issue.input)}`,
    }),
    description: z.string().default(""),
    schema: z.object({ input: jsonSchema.optional(), output: jsonSchema.optional() }).optional(),
    input: jsonSchema.optional(),
    output: jsonSchema.optional(),
    handler: z.string().min(1, "must name a handler"),
    runtime: z.string().min(1).default("inline"),
    timeoutMs: z.number().int().positive().optional(),
    retry: retryPolicySchema.optional(),
    memoryMb: z.number().positive().optional(),
    sandbox: sandboxSettingsSchema.optional(),
    requires: z.record(z.string(), z.string()).optional(),
    tags: z.array(z.string()).default([]),
    enabled: z.boolean().default(true),
    apiKeyId: z.string().min(1).default("system"),
    source: z.string().default("api"),
    code: skillCodeSchema.optional(),
    examples: z.array(skillExampleSchema).optional(),
    ...durableSkillFields,
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((value, context) => {
    for (const [dependency, range] of Object.entries(value.requires ?? {})) {
      if (semver.validRange(range) === null) {
        context.addIssue({
          code: "custom",
          path: ["requires", dependency],
          message: `must be a semver range such as "^1.0.0", got ${JSON.stringify(range)}`,
        });
      }
    }
  });

/** What `register()` accepts. */
export type SkillRegistration = z.input<typeof skillRegistrationSchema>;

/**
 * Formats zod issues as one line per field: "<subject>: `version` must be …". `fieldPrefix`
 * names where the validated object sits (e.g. "skillbox." inside a package.json).
 */
export function formatZodIssues(error: z.ZodError, subject: string, fieldPrefix = ""): string {
  const lines = error.issues.map((issue) => {
    const path = `${fieldPrefix}${issue.path.join(".")}`;
    const field = path === "" ? "value" : `\`${path.replace(/\.$/, "")}\``;
    if (issue.code === "unrecognized_keys") {
      const keys = issue.keys.map((key) => `\`${fieldPrefix}${[...issue.path, key].join(".")}\``).join(", ");
      return `${subject}: unknown field ${keys}; check the spelling`;
    }
    return `${subject}: ${field} ${issue.message}`;
  });
  return lines.join("\n");
}
