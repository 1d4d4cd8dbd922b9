import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchema } from "@skillbox/core";

/** A skill's input schema made fit for a tool's `inputSchema`. */
export interface ToolInputSchema {
  schema: Tool["inputSchema"];
  /** True when the skill's input travels as the `input` argument (its schema admits no object). */
  wrapped: boolean;
}

/** The property a wrapped input travels in. */
export const WRAPPED_INPUT_PROPERTY = "input";

/** Keywords that belong at the root of a document: `$ref`s inside the wrapped schema resolve against them. */
const ROOT_KEYWORDS = ["$schema", "$id", "$defs", "definitions"] as const;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Whether some JSON object can satisfy `schema`, judged from `type`, `const`, `enum` and the
 * combinators — enough to tell `{ type: "string" }` or `{ anyOf: [string, number] }` apart from
 * object schemas, without a full satisfiability check.
 */
function admitsObjects(schema: unknown): boolean {
  if (typeof schema === "boolean") return schema;
  if (!isPlainObject(schema)) return true;
  const { type } = schema;
  if (typeof type === "string" && type !== "object") return false;
  if (Array.isArray(type) && !type.includes("object")) return false;
  if ("const" in schema && !isPlainObject(schema.const)) return false;
  if (Array.isArray(schema.enum) && !schema.enum.some(isPlainObject)) return false;
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some(admitsObjects)) return false;
  if (Array.isArray(schema.oneOf) && !schema.oneOf.some(admitsObjects)) return false;
  if (Array.isArray(schema.allOf) && !schema.allOf.every(admitsObjects)) return false;
  return true;
}

/**
 * MCP requires `type: "object"` at the root of a tool's `inputSchema`, and tool arguments are
 * always a JSON object. So:
 *
 * - a schema that admits objects (`type: "object"`, a `type` list with `"object"`, no `type` at
 *   all, e.g. `{}`) gets `type: "object"` and is otherwise unchanged — the arguments are the input;
 * - any other schema (`{ type: "string" }`, an array, a union of scalars) is wrapped as the
 *   required property `input` — `{ type: "object", properties: { input: <schema> }, required:
 *   ["input"], additionalProperties: false }` — and the call passes `arguments.input` to the skill.
 *   `$schema`, `$id`, `$defs` and `definitions` move to the wrapper's root so that `$ref`s such as
 *   `#/$defs/item` still resolve; a `$ref` into the schema itself (`#/items`) would not.
 */
export function toolInputSchema(schema: JsonSchema): ToolInputSchema {
  if (admitsObjects(schema)) {
    return { schema: { ...schema, type: "object" }, wrapped: false };
  }
  const inner: Record<string, unknown> = { ...schema };
  const root: Record<string, unknown> = {};
  for (const keyword of ROOT_KEYWORDS) {
    if (keyword in inner) {
      root[keyword] = inner[keyword];
      delete inner[keyword];
    }
  }
  return {
    schema: {
      ...root,
      type: "object",
      properties: { [WRAPPED_INPUT_PROPERTY]: inner },
      required: [WRAPPED_INPUT_PROPERTY],
      additionalProperties: false,
    },
    wrapped: true,
  };
}
