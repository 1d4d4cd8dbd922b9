import { createHash } from "node:crypto";
import { SKILL_NAME_PATTERN } from "@skillbox/core";

/** Marks a tool name as a skill, so tools of the client (`get_time`, …) never decode as skills. */
export const TOOL_NAME_PREFIX = "skillbox_";

/** What every provider accepts as a tool name (OpenAI, Anthropic and Gemini all allow at least this). */
const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

const MAX_TOOL_NAME_LENGTH = 64;

/** `_h` plus 8 hex digits of the SHA-256 of the reference; `h` is no escape code, so it never parses as readable. */
const HASH_SUFFIX_LENGTH = 10;

/** The semver 2.0.0 grammar (semver.org), so decoding needs no `semver` dependency. */
const SEMVER_PATTERN =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** A skill as a tool name stands for it: the name, and the version when the tool is pinned. */
export interface DecodedToolName {
  name: string;
  version?: string;
}

/**
 * The escaped skill name as a list of units (one source character each), so a cut never
 * splits an escape. `_` is the escape character: `__` is `_`, `_d` is `.`, `_s` ends a scope.
 */
function nameUnits(name: string): string[] {
  const scope = /^@([^/]+)\/(.+)$/.exec(name);
  if (scope !== null) return [...escapeNamePart(scope[1] ?? ""), "_s", ...escapeNamePart(scope[2] ?? "")];
  return escapeNamePart(name);
}

function escapeNamePart(part: string): string[] {
  return [...part].map((character) => {
    if (character === "_") return "__";
    if (character === ".") return "_d";
    return character;
  });
}

/**
 * Versions are written more readably than names because semver has no `_` and no empty
 * identifiers: `.` becomes `_` and `+` becomes `__` (`1.2.0-rc.1` → `1_2_0-rc_1`).
 */
function versionUnits(version: string): string[] {
  return [...version].map((character) => {
    if (character === ".") return "_";
    if (character === "+") return "__";
    return character;
  });
}

/**
 * The tool name of a skill (and, when given, of one exact version of it). The result matches
 * `^[a-zA-Z0-9_-]{1,64}$` — what OpenAI, Anthropic and Gemini all accept — and
 * {@link decodeToolName} reads it back:
 *
 * - `echo` → `skillbox_echo`; `echo@1.0.0` → `skillbox_echo_v1_0_0`
 * - `@acme/weather@2.0.0-rc.1` → `skillbox_acme_sweather_v2_0_0-rc_1`
 * - `github.issues` → `skillbox_github_dissues`; `get_time` → `skillbox_get__time`
 *
 * A name longer than 64 characters is cut and ends in `_h` plus 8 hex digits of a hash of the
 * reference; such a name is read back only with the list of skills (see {@link decodeToolName}).
 */
export function encodeToolName(name: string, version?: string): string {
  const units = [...nameUnits(name)];
  if (version !== undefined) units.push("_v", ...versionUnits(version));
  const readable = TOOL_NAME_PREFIX + units.join("");
  if (readable.length <= MAX_TOOL_NAME_LENGTH) return readable;
  const reference = version === undefined ? name : `${name}@${version}`;
  const hash = createHash("sha256").update(reference).digest("hex").slice(0, 8);
  let prefix = TOOL_NAME_PREFIX;
  for (const unit of units) {
    if (prefix.length + unit.length > MAX_TOOL_NAME_LENGTH - HASH_SUFFIX_LENGTH) break;
    prefix += unit;
  }
  return `${prefix}_h${hash}`;
}

/** Reads a readable tool name back; `undefined` when it is not one {@link encodeToolName} writes. */
function parseToolName(toolName: string): DecodedToolName | undefined {
  if (!TOOL_NAME_PATTERN.test(toolName) || !toolName.startsWith(TOOL_NAME_PREFIX)) return undefined;
  const body = toolName.slice(TOOL_NAME_PREFIX.length);
  let name = "";
  let scope: string | undefined;
  let index = 0;
  let version: string | undefined;
  while (index < body.length) {
    const character = body[index] as string;
    if (character !== "_") {
      name += character;
      index += 1;
      continue;
    }
    const code = body[index + 1];
    index += 2;
    if (code === "_") name += "_";
    else if (code === "d") name += ".";
    else if (code === "s" && scope === undefined) {
      scope = name;
      name = "";
    } else if (code === "v") {
      version = body.slice(index).replace(/__|_/g, (match) => (match === "_" ? "." : "+"));
      break;
    } else return undefined;
  }
  const fullName = scope === undefined ? name : `@${scope}/${name}`;
  if (!SKILL_NAME_PATTERN.test(fullName)) return undefined;
  if (version !== undefined && !SEMVER_PATTERN.test(version)) return undefined;
  // Only the one spelling encodeToolName writes is accepted, so every skill has exactly one name.
  if (encodeToolName(fullName, version) !== toolName) return undefined;
  return version === undefined ? { name: fullName } : { name: fullName, version };
}

/**
 * The skill a tool name stands for — `{ name }` for a tool that runs the highest version at
 * call time, `{ name, version }` for a pinned one — or `undefined` for every other name
 * (the client's own tools, malformed names).
 *
 * Readable names decode on their own. A hashed name (a skill name too long to fit in 64
 * characters) decodes only when `skills` is given and holds the skill it was made from.
 */
export function decodeToolName(
  toolName: string,
  skills?: ReadonlyArray<{ name: string; version: string }>,
): DecodedToolName | undefined {
  if (typeof toolName !== "string") return undefined;
  const parsed = parseToolName(toolName);
  if (parsed !== undefined) return parsed;
  if (skills === undefined || !toolName.startsWith(TOOL_NAME_PREFIX)) return undefined;
  for (const skill of skills) {
    if (encodeToolName(skill.name) === toolName) return { name: skill.name };
    if (encodeToolName(skill.name, skill.version) === toolName) {
      return { name: skill.name, version: skill.version };
    }
  }
  return undefined;
}
