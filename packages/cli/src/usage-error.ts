import { SkillboxError, type SkillboxErrorCode, type SkillboxErrorOptions } from "@skillbox/core";
import { CommanderError } from "commander";
import type { CliErrorCode } from "./cli-error-codes.js";
import { EXIT_CODES } from "./exit-codes.js";

/** Errors about the command line itself: they exit 2, not 1. */
const usageErrors = new WeakSet<Error>();

/**
 * A `SkillboxError` that says the command line is wrong (a bad argument or option value the
 * command found itself, after commander's own checks): `skillbox` exits with it as status 2.
 */
export function usageError(
  code: CliErrorCode | SkillboxErrorCode,
  message: string,
  options?: SkillboxErrorOptions,
): SkillboxError {
  const error = new SkillboxError(code, message, options);
  usageErrors.add(error);
  return error;
}

/**
 * The exit code for an error a command threw: commander's help and version exits keep theirs
 * (0); its usage errors, `USAGE` errors and {@link usageError}s are 2; everything else is 1.
 */
export function exitCodeOf(error: unknown): number {
  if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT_CODES.success : EXIT_CODES.usage;
  if (error instanceof Error && usageErrors.has(error)) return EXIT_CODES.usage;
  if ((error as { code?: unknown } | null)?.code === "USAGE") return EXIT_CODES.usage;
  return EXIT_CODES.failure;
}
