import { SkillboxError } from "@skillbox/core";
import { MAX_PROGRAM_TIMEOUT_MS, MIN_PROGRAM_TIMEOUT_MS } from "./run-code-schemas.ts";

/**
 * Settings of {@link createRunCodeSkill}. There are no environment variables: the handler runs
 * inside the sandbox, which the host's environment never reaches.
 */
export interface RunCodeSettings {
  /** Bytes kept of stdout and of stderr each; the rest is dropped (`truncated: true`). Default 65536. */
  maxOutputBytes?: number;
  /** The program's timeout when the input names none, in ms. Default 10000. */
  defaultTimeoutMs?: number;
}

/** {@link RunCodeSettings} with every field filled in. */
export type ResolvedRunCodeSettings = Required<RunCodeSettings>;

/**
 * The most output kept per stream. The result leaves the sandbox as one JSON line, which the
 * sandbox caps at 1 MiB; a control byte takes 6 bytes once JSON-escaped, so two streams of this
 * size still fit.
 */
const MAX_OUTPUT_BYTES = 80 * 1024;

const DEFAULTS: ResolvedRunCodeSettings = { maxOutputBytes: 64 * 1024, defaultTimeoutMs: 10_000 };

function checkInteger(
  field: keyof RunCodeSettings,
  value: unknown,
  minimum: number,
  maximum: number,
): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < minimum || value > maximum) {
    throw new SkillboxError(
      "CONFIG_INVALID",
      `run-code settings: \`${field}\` must be an integer from ${minimum} to ${maximum}, got ${JSON.stringify(value)}`,
      { data: { field } },
    );
  }
  return value;
}

/**
 * Validates settings and fills in the defaults; a bad value throws `CONFIG_INVALID` naming the
 * field and its range. (Validated by hand, not with zod: this module loads inside the sandbox.)
 */
export function resolveRunCodeSettings(settings: RunCodeSettings = {}): ResolvedRunCodeSettings {
  const known = new Set<string>(Object.keys(DEFAULTS));
  for (const field of Object.keys(settings)) {
    if (!known.has(field)) {
      throw new SkillboxError(
        "CONFIG_INVALID",
        `run-code settings: unknown field \`${field}\`; use ${[...known].map((name) => `\`${name}\``).join(" or ")}`,
        { data: { field } },
      );
    }
  }
  return {
    maxOutputBytes: checkInteger(
      "maxOutputBytes",
      settings.maxOutputBytes ?? DEFAULTS.maxOutputBytes,
      1,
      MAX_OUTPUT_BYTES,
    ),
    defaultTimeoutMs: checkInteger(
      "defaultTimeoutMs",
      settings.defaultTimeoutMs ?? DEFAULTS.defaultTimeoutMs,
      MIN_PROGRAM_TIMEOUT_MS,
      MAX_PROGRAM_TIMEOUT_MS,
    ),
  };
}
