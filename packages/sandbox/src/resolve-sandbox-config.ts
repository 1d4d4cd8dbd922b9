import { SkillboxError } from "@skillbox/core";
import { formatZodIssues } from "@skillbox/core/internal";
import { z } from "zod";
import type { ResolvedSandboxConfig, SandboxConfig } from "./sandbox-types.js";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Most bytes kept of stdout and of stderr each when a config sets no `maxOutputBytes`. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

const sandboxConfigSchema = z.strictObject({
  cpus: z.number().positive().optional(),
  memoryMb: z.number().int().min(6, "must be at least 6 (MiB); engines refuse less").optional(),
  pidsLimit: z.number().int().positive().default(128),
  timeout: z.number().int().min(0).default(30_000),
  network: z.boolean().default(false),
  readOnly: z.boolean().default(true),
  workDir: z.string().startsWith("/", "must be an absolute path inside the sandbox").optional(),
  tmpfsSizeMb: z.number().int().positive().default(64),
  user: z
    .string()
    .regex(/^\d+(:\d+)?$/, 'must be "uid" or "uid:gid" in numbers, such as "65534:65534"')
    .default("65534:65534"),
  stdin: z.union([z.string(), z.instanceof(Uint8Array)]).optional(),
  maxOutputBytes: z.number().int().positive().default(DEFAULT_MAX_OUTPUT_BYTES),
  mounts: z
    .array(
      z.strictObject({
        source: z.string().startsWith("/", "must be an absolute host path"),
        target: z.string().startsWith("/", "must be an absolute path inside the sandbox"),
        readOnly: z.boolean().optional(),
      }),
    )
    .default([]),
  inheritEnv: z.array(z.string().regex(ENV_NAME, "must be environment variable names")).default([]),
  signal: z.instanceof(AbortSignal).optional(),
});

/** Validates a run's config and fills in the hardened defaults; errors name the field. */
export function resolveSandboxConfig(config: SandboxConfig = {}): ResolvedSandboxConfig {
  const parsed = sandboxConfigSchema.safeParse(config);
  if (!parsed.success) {
    throw new SkillboxError(
      "SANDBOX_CONFIG_INVALID",
      formatZodIssues(parsed.error, "sandbox config", "config."),
    );
  }
  const { stdin: _stdin, signal: _signal, ...resolved } = parsed.data;
  return { ...resolved, cpus: resolved.cpus, memoryMb: resolved.memoryMb, workDir: resolved.workDir };
}

/** Checks the names of the variables given to `run()`; values must be strings. */
export function validateSandboxEnv(env: Record<string, string>): Record<string, string> {
  for (const [name, value] of Object.entries(env)) {
    if (!ENV_NAME.test(name)) {
      throw new SkillboxError(
        "SANDBOX_CONFIG_INVALID",
        `sandbox env: ${JSON.stringify(name)} is not a valid variable name (letters, digits and _; not starting with a digit)`,
      );
    }
    if (typeof value !== "string") {
      throw new SkillboxError(
        "SANDBOX_CONFIG_INVALID",
        `sandbox env: \`${name}\` must be a string, got ${typeof value}; use JSON.stringify for structured values`,
      );
    }
  }
  return env;
}
