import { createHash } from "node:crypto";

/**
 * What tool names may look like. The MCP spec (SEP-986) also allows `.` and up to 128
 * characters, but the model APIs MCP clients forward tools to (OpenAI, Anthropic, Gemini)
 * accept only this, so a name that fits here works everywhere.
 */
const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** The shape of a hashed tool name; a readable name of this shape is hashed too, so the two never meet. */
const HASHED_TOOL_NAME_PATTERN = /_x[0-9a-f]{8}$/;

const MAX_TOOL_NAME_LENGTH = 64;
/** `_x` plus 8 hex digits. */
const HASH_SUFFIX_LENGTH = 10;

/** `@scope/name` → `scope__name`; an unscoped name is left alone. */
function readableToolName(skillName: string): string {
  const match = /^@([^/]+)\/(.+)$/.exec(skillName);
  return match === null ? skillName : `${match[1]}__${match[2]}`;
}

/**
 * The MCP tool name of a skill name: a name matching `^[a-zA-Z0-9_-]{1,64}$`, the same for the
 * same skill name everywhere (stdio, HTTP, every session), and never the same for two skill names.
 *
 * - Names of letters, digits, `_` and `-` stay as they are: `echo` → `echo`.
 * - A scope becomes a double underscore: `@acme/weather` → `acme__weather`.
 * - Anything that would not read back unchanged — a `.` in the name, `__` in an unscoped name or
 *   in a scope, more than 64 characters, or a result ending like a hashed name (`_x` + 8 hex
 *   digits) — becomes the readable form with other characters replaced by `_`, cut to fit, plus
 *   `_x` and the first 8 hex digits of the SHA-256 of the skill name:
 *   `github.issues` → `github_issues_x7f2acf9e`.
 *
 * {@link skillNameFromToolName} reverses the first two forms; every tool also names its skill in
 * `_meta["skillbox/skill"]`, which is how a client reads back a hashed one.
 */
export function skillToolName(skillName: string): string {
  const readable = readableToolName(skillName);
  if (
    TOOL_NAME_PATTERN.test(readable) &&
    !HASHED_TOOL_NAME_PATTERN.test(readable) &&
    skillNameFromToolName(readable) === skillName
  ) {
    return readable;
  }
  const hash = createHash("sha256").update(skillName).digest("hex").slice(0, 8);
  const prefix = readable.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, MAX_TOOL_NAME_LENGTH - HASH_SUFFIX_LENGTH);
  return `${prefix}_x${hash}`;
}

/**
 * The skill name a readable tool name stands for (`acme__weather` → `@acme/weather`), or
 * `undefined` for a hashed tool name (look it up in the tool's `_meta["skillbox/skill"]`) and for
 * strings that are no tool name at all.
 */
export function skillNameFromToolName(toolName: string): string | undefined {
  if (!TOOL_NAME_PATTERN.test(toolName) || HASHED_TOOL_NAME_PATTERN.test(toolName)) return undefined;
  const separator = toolName.indexOf("__");
  return separator <= 0 ? toolName : `@${toolName.slice(0, separator)}/${toolName.slice(separator + 2)}`;
}
