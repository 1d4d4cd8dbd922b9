import type { Skill } from "@skillbox/core";
import { toGeminiSchema } from "./gemini-schema.js";
import { parametersSchema } from "./parameters-schema.js";
import { assertToolFormat, type ToolFormat } from "./tool-format.js";
import { type ToolNameOptions, toolNameMap } from "./tool-name.js";

/** Options of {@link toTools}: how tools are named (see `toolNameMap`). */
export type ToOptions = ToolNameOptions;

/**
 * Skills as the tool definitions of a provider's request:
 *
 * - `openai-chat`: `[{ type: "function", function: { name, description, parameters } }]`
 * - `openai-responses`: `[{ type: "function", name, description, parameters, strict: false }]`
 * - `anthropic`: `[{ name, description, input_schema }]`
 * - `gemini`: `[{ functionDeclarations: [{ name, description, parameters }] }]` (one tool holding
 *   every declaration; parameters adapted by the Gemini schema rules)
 *
 * Without `pinVersions`, several versions of one skill produce one tool (described by the first
 * version in the list, which `registry.list()` orders highest first). Skills whose input is not
 * an object take their input as `{ input: … }`, because every provider wants object parameters.
 *
 * Tool names come from {@link toolNameMap} over `skills` (`github.issues` → `github_issues`, the
 * name MCP lists too); pass the same skills and options to `extractToolCalls` or
 * `executeToolCalls` to read calls back.
 */
export function toTools(skills: Skill[], format: ToolFormat, options: ToOptions = {}): unknown[] {
  assertToolFormat(format);
  const names = toolNameMap(skills, options);
  const seen = new Set<string>();
  const declarations: Array<{ name: string; description: string; parameters: Record<string, unknown> }> = [];
  for (const skill of skills) {
    const name = names.toolName(
      options.pinVersions === true ? { name: skill.name, version: skill.version } : { name: skill.name },
    ) as string;
    if (seen.has(name)) continue;
    seen.add(name);
    const description = skill.description.trim() === "" ? `Runs the skill ${skill.name}` : skill.description;
    declarations.push({ name, description, parameters: parametersSchema(skill) });
  }
  switch (format) {
    case "openai-chat":
      return declarations.map((declaration) => ({ type: "function", function: declaration }));
    case "openai-responses":
      return declarations.map((declaration) => ({ type: "function", ...declaration, strict: false }));
    case "anthropic":
      return declarations.map(({ name, description, parameters }) => ({
        name,
        description,
        input_schema: parameters,
      }));
    case "gemini":
      if (declarations.length === 0) return [];
      return [
        {
          functionDeclarations: declarations.map(({ name, description, parameters }) => {
            const adapted = toGeminiSchema(parameters);
            // Gemini rejects an OBJECT without properties; a skill without inputs declares no parameters.
            const properties = adapted.properties as Record<string, unknown> | undefined;
            return properties === undefined || Object.keys(properties).length === 0
              ? { name, description }
              : { name, description, parameters: adapted };
          }),
        },
      ];
  }
}
