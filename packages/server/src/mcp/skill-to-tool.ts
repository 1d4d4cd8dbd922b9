import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Skill } from "@skillbox/core";
import { toolInputSchema } from "./tool-input-schema.js";

/** A skill version as an MCP tool, with what a call needs to know about it. */
export interface SkillTool {
  /** The definition `tools/list` returns. */
  tool: Tool;
  /** The skill version the tool runs. */
  skill: Skill;
  /** The skill's input is the `input` argument rather than the arguments themselves. */
  wrapsInput: boolean;
  /** An `outputSchema` was advertised, so a successful call must carry `structuredContent`. */
  hasOutputSchema: boolean;
}

/** `_meta` keys on tools and tool results (MCP `_meta` names take a `prefix/` of their own). */
const SKILL_META_KEY = "skillbox/skill";
const VERSION_META_KEY = "skillbox/version";
/** On a tool: `"required"` when every call waits for approval; on a result: the execution's `approval` record. */
export const APPROVAL_META_KEY = "skillbox/approval";
export const EXECUTION_META_KEY = "skillbox/executionId";
export const STATUS_META_KEY = "skillbox/status";

/**
 * The MCP tool of a skill version: `toolName` (from core's `createToolNameMap` over the tools
 * listed together, so it matches what `@skillbox/llm` calls the skill), the skill name as
 * `title`, its description, its input schema adapted to MCP's object-only `inputSchema` (see
 * `toolInputSchema`), and its output schema as `outputSchema` when that describes an object
 * (`type: "object"`) — MCP's `structuredContent` is always an object, so other outputs travel
 * as text only. `_meta` names the skill and the version, and says `"skillbox/approval":
 * "required"` for a skill whose every call waits for a person's approval.
 */
export function skillToTool(skill: Skill, toolName: string): SkillTool {
  const input = toolInputSchema(skill.schema.input);
  const output = skill.schema.output;
  const hasOutputSchema = output?.type === "object";
  const tool: Tool = {
    name: toolName,
    title: skill.name,
    inputSchema: input.schema,
    _meta: { [SKILL_META_KEY]: skill.name, [VERSION_META_KEY]: skill.version },
  };
  // Told up front, so a client can warn that a call waits for a person (a predicate in
  // `defineSkill` decides per input and is not known here).
  if (skill.approval === "required") (tool._meta as Record<string, unknown>)[APPROVAL_META_KEY] = "required";
  if (skill.description !== "") tool.description = skill.description;
  if (hasOutputSchema) tool.outputSchema = output as Tool["outputSchema"];
  return { tool, skill, wrapsInput: input.wrapped, hasOutputSchema };
}
