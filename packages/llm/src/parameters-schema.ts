import type { JsonSchema, Skill } from "@skillbox/core";

/** The property a non-object skill input is wrapped in, because every provider wants object parameters. */
const WRAPPED_INPUT_PROPERTY = "input";

/**
 * True when a skill's input is an object (or unconstrained, like `{}`), so the tool arguments are
 * the input itself. Any other input (`{ type: "string" }`, an array, …) is wrapped as
 * `{ input: … }`: OpenAI, Anthropic and Gemini all reject function parameters that are not
 * an object.
 */
function takesObjectInput(schema: JsonSchema | undefined): boolean {
  if (schema === undefined) return true;
  const type = schema.type;
  if (type === undefined) return !("items" in schema) && !("enum" in schema) && !("const" in schema);
  return type === "object";
}

/** The JSON Schema of a skill's tool arguments: the input schema itself, or the wrapper for a non-object one. */
export function parametersSchema(skill: Skill): JsonSchema {
  const input = skill.schema.input ?? {};
  if (!takesObjectInput(input)) {
    return {
      type: "object",
      properties: { [WRAPPED_INPUT_PROPERTY]: input },
      required: [WRAPPED_INPUT_PROPERTY],
    };
  }
  // An unconstrained `{}` still needs `type: "object"` for the providers to accept it.
  const { type: _type, ...rest } = input;
  return { type: "object", ...rest, properties: (input.properties as JsonSchema | undefined) ?? {} };
}

/** The skill input for the arguments of a call: unwraps `{ input }` for skills whose input is not an object. */
export function skillInputFromArguments(schema: JsonSchema | undefined, toolArguments: unknown): unknown {
  if (takesObjectInput(schema)) return toolArguments;
  if (
    typeof toolArguments === "object" &&
    toolArguments !== null &&
    WRAPPED_INPUT_PROPERTY in toolArguments
  ) {
    return (toolArguments as Record<string, unknown>)[WRAPPED_INPUT_PROPERTY];
  }
  return toolArguments;
}
