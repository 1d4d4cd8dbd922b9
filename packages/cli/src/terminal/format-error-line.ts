import { isSkillboxError } from "@skillbox/core";
import type { Colors } from "./terminal.js";

/** The code to show for an error: a `SkillboxError`'s code, a Node.js error code, or `UNEXPECTED`. */
export function errorCodeOf(error: unknown): string {
  if (isSkillboxError(error)) return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "UNEXPECTED";
}

/**
 * `<label> CODE: message`, with the message's later lines indented under it (zod reports one
 * line per field). `codeOrError` is a code (then `message` is used) or an error to describe.
 */
export function formatErrorLine(
  label: string,
  codeOrError: unknown,
  message: string | undefined,
  colors: Colors,
): string {
  const code = typeof codeOrError === "string" ? codeOrError : errorCodeOf(codeOrError);
  const text =
    message ?? (codeOrError instanceof Error ? codeOrError.message : String(codeOrError ?? "unknown error"));
  const [first = "", ...rest] = text.split("\n");
  const lines = [`${label} ${colors.bold(code)}: ${first}`, ...rest.map((line) => `  ${line}`)];
  if (code === "UNEXPECTED" && codeOrError instanceof Error && process.env.SKILLBOX_LOG_LEVEL === "debug") {
    lines.push(colors.dim(codeOrError.stack ?? ""));
  }
  return lines.join("\n");
}
