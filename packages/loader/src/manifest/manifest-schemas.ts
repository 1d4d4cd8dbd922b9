import { SKILL_NAME_PATTERN } from "@skillbox/core";
import {
  durableSkillFields,
  retryPolicySchema,
  sandboxSettingsSchema,
  skillExampleSchema,
} from "@skillbox/core/internal";
import semver from "semver";
import { z } from "zod";

const jsonSchema = z.record(z.string(), z.unknown(), { error: "must be a JSON Schema object" });
const relativeModulePath = z
  .string({ error: 'must be a path to the handler module, such as "./index.ts"' })
  .min(1, 'must be a path to the handler module, such as "./index.ts"');
const semverVersion = z
  .string({ error: 'must be a semver version such as "1.0.0"' })
  .refine((value) => semver.valid(value) !== null, {
    error: (issue) => `must be a semver version such as "1.0.0", got ${JSON.stringify(issue.input)}`,
  });
const skillName = z
  .string({ error: "must be a string" })
  .regex(SKILL_NAME_PATTERN, 'must be a skill name such as "echo" or "@acme/weather"');
const semverRanges = z.record(
  z.string(),
  z.string().refine((value) => semver.validRange(value) !== null, {
    error: (issue) => `must be a semver range such as "^1.2.0", got ${JSON.stringify(issue.input)}`,
  }),
);

/** The fields a skill manifest may carry besides identity (shared by `skill.json` and package.json). */
const skillFields = {
  description: z.string().optional(),
  input: jsonSchema.optional(),
  output: jsonSchema.optional(),
  handler: relativeModulePath,
  runtime: z.string().min(1).optional(),
  timeoutMs: z.number().int().positive().optional(),
  retry: retryPolicySchema.optional(),
  memoryMb: z.number().positive().optional(),
  sandbox: sandboxSettingsSchema.optional(),
  tags: z.array(z.string()).optional(),
  enabled: z.boolean().optional(),
  requires: semverRanges.optional(),
  examples: z.array(skillExampleSchema).optional(),
  ...durableSkillFields,
};

/** `skill.json`. Unknown fields are errors, so a typo such as `timeout` is caught, not ignored. */
export const skillManifestSchema = z
  .object({ name: skillName, version: semverVersion, kind: z.literal("skill").optional(), ...skillFields })
  .strict();

/** A glob over skill names in an interceptor's `match`. */
const namePattern = z.string().min(1, "must be a non-empty glob over skill names");

/** The fields an interceptor manifest may carry besides identity. */
const interceptorFields = {
  description: z.string().optional(),
  handler: relativeModulePath,
  order: z.number().finite().optional(),
  match: z
    .object({
      // An empty pattern matches nothing and makes the name matcher throw: refused here.
      names: z.union([namePattern, z.array(namePattern)]).optional(),
      tags: z.array(z.string()).optional(),
    })
    .strict()
    .optional(),
  /** Passed to the module's default export when it is a factory function. */
  options: z.record(z.string(), z.unknown()).optional(),
  enabled: z.boolean().optional(),
};

/** `interceptor.json`. */
export const interceptorManifestSchema = z
  .object({
    name: z.string().min(1, "must name the interceptor"),
    version: semverVersion.optional(),
    kind: z.literal("interceptor").optional(),
    ...interceptorFields,
  })
  .strict();

/** The `"skillbox"` field of a package.json that is a skill (identity comes from package.json). */
export const packageSkillFieldSchema = z
  .object({ kind: z.literal("skill").optional(), ...skillFields })
  .strict();

/** The `"skillbox"` field of a package.json that is an interceptor plugin. */
export const packageInterceptorFieldSchema = z
  .object({ kind: z.literal("interceptor"), ...interceptorFields })
  .strict();

/** The `"skillbox"` field of a package.json that is a bundle: its subfolders are the packages. */
export const packageBundleFieldSchema = z.object({ kind: z.literal("bundle") }).strict();

/** A validated skill manifest, wherever it came from. */
export type SkillManifest = z.output<typeof skillManifestSchema>;
/** A validated interceptor manifest, wherever it came from. */
export type InterceptorManifest = z.output<typeof interceptorManifestSchema>;
