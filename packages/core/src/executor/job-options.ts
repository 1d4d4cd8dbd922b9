/** How a queued execution's input and options are kept in its job row, and read back. */

import type { Context } from "@opentelemetry/api";
import { SkillboxError } from "../errors/skillbox-error.js";
import { storedSpanContextOf } from "../telemetry/stored-span-context.js";
import type { ExecuteOptions, Skill, SubmitOptions } from "../types.js";
import type { JobOptions } from "./job-store.js";

/** The input as JSON text: what a queued execution keeps; input JSON cannot write is refused. */
export function jsonOf(input: unknown, skill: Skill): string | null {
  if (input === undefined) return null;
  try {
    return JSON.stringify(input) ?? null;
  } catch (error) {
    throw new SkillboxError(
      "INPUT_INVALID",
      `${skill.name}@${skill.version}: a queued execution's \`input\` must be JSON (${(error as Error).message})`,
    );
  }
}

/** The options of a call that a queued execution keeps, and the trace context it continues. */
export function jobOptionsOf(
  options: ExecuteOptions | SubmitOptions,
  parent: Context | undefined,
): JobOptions {
  const kept: JobOptions = {};
  if (options.timeoutMs !== undefined) kept.timeoutMs = options.timeoutMs;
  if (options.totalTimeoutMs !== undefined) kept.totalTimeoutMs = options.totalTimeoutMs;
  if (options.maxRetries !== undefined) kept.maxRetries = options.maxRetries;
  if (options.retry !== undefined) kept.retry = options.retry as Record<string, unknown>;
  if (options.approvalTimeoutMs !== undefined) kept.approvalTimeoutMs = options.approvalTimeoutMs;
  if (options.toolCallId !== undefined) kept.toolCallId = options.toolCallId;
  const parentSpan = storedSpanContextOf(parent);
  if (parentSpan !== undefined) kept.parentSpan = parentSpan;
  return kept;
}

/** JSON text the store wrote; null (or unreadable text) reads as null. */
export function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The options a job row keeps (see {@link jobOptionsOf}); unreadable text reads as none. */
export function parseJobOptions(text: string): JobOptions {
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === "object" && parsed !== null ? (parsed as JobOptions) : {};
  } catch {
    return {};
  }
}
