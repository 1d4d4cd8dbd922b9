import { SkillboxError } from "@skillbox/core";

/** The provider wire formats tools, tool calls and tool results can be written in. */
export type ToolFormat = "openai-chat" | "openai-responses" | "anthropic" | "gemini";

const TOOL_FORMATS: ReadonlySet<string> = new Set(["openai-chat", "openai-responses", "anthropic", "gemini"]);

/**
 * Throws `TOOL_FORMAT_INVALID` unless `format` is one of the four formats, so a typo in plain
 * JavaScript fails loudly instead of producing an empty tool list.
 */
export function assertToolFormat(format: unknown, allowed: ReadonlySet<string> = TOOL_FORMATS): ToolFormat {
  if (typeof format !== "string" || !allowed.has(format)) {
    throw new SkillboxError(
      "TOOL_FORMAT_INVALID",
      `Unknown tool format ${JSON.stringify(format)}; use one of ${[...allowed].map((name) => `"${name}"`).join(", ")}`,
    );
  }
  return format as ToolFormat;
}
