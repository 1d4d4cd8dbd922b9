import type { JsonSchema } from "@skillbox/core";

/**
 * The keywords Gemini's function declarations understand (its OpenAPI 3.0 `Schema` subset).
 * Everything else is dropped, because Gemini rejects a declaration with an unknown field.
 */
const GEMINI_KEYWORDS: ReadonlySet<string> = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "items",
  "minItems",
  "maxItems",
  "properties",
  "required",
  "minProperties",
  "maxProperties",
  "propertyOrdering",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "default",
  "example",
  "anyOf",
]);

/** `$ref`s nested deeper than this (a recursive schema) become an unconstrained object. */
const MAX_REFERENCE_DEPTH = 8;

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Finds `#/$defs/x` or `#/definitions/x` in the root; other references cannot be inlined. */
function resolveReference(root: JsonSchema, reference: string): JsonSchema | undefined {
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(reference);
  if (match === null) return undefined;
  const definitions = root[match[1] as string];
  if (!isSchema(definitions)) return undefined;
  const definition =
    definitions[
      decodeURIComponent(match[2] as string)
        .replace(/~1/g, "/")
        .replace(/~0/g, "~")
    ];
  return isSchema(definition) ? definition : undefined;
}

function adapt(schema: JsonSchema, root: JsonSchema, depth: number): JsonSchema {
  if (typeof schema.$ref === "string") {
    const target = depth < MAX_REFERENCE_DEPTH ? resolveReference(root, schema.$ref) : undefined;
    if (target === undefined) return { type: "object" };
    const { $ref: _reference, ...siblings } = schema;
    return adapt({ ...target, ...siblings }, root, depth + 1);
  }
  const result: JsonSchema = {};
  // `allOf` of object schemas is merged, the usual shape of "extends" in generated schemas.
  let source = schema;
  if (Array.isArray(schema.allOf)) {
    const { allOf, ...rest } = schema;
    source = rest;
    for (const part of allOf) {
      if (!isSchema(part)) continue;
      const resolved = typeof part.$ref === "string" ? (resolveReference(root, part.$ref) ?? {}) : part;
      source = {
        ...resolved,
        ...source,
        properties: { ...(resolved.properties as JsonSchema), ...(source.properties as JsonSchema) },
        required: [
          ...((resolved.required as string[] | undefined) ?? []),
          ...((source.required as string[] | undefined) ?? []),
        ],
      };
    }
    if ((source.required as string[]).length === 0) delete source.required;
    if (Object.keys(source.properties as JsonSchema).length === 0) delete source.properties;
  }
  for (const [keyword, value] of Object.entries(source)) {
    if (keyword === "type" && Array.isArray(value)) {
      // `["string", "null"]` is how JSON Schema says nullable; Gemini takes one type plus `nullable`.
      const types = value.filter((type) => type !== "null");
      if (types.length < value.length) result.nullable = true;
      if (types.length === 1) result.type = types[0];
      else if (types.length > 1) result.anyOf = types.map((type) => ({ type }));
    } else if (keyword === "const") {
      result.enum = [String(value)];
      if (source.type === undefined) result.type = "string";
    } else if (keyword === "enum" && Array.isArray(value)) {
      // Gemini enums are lists of strings.
      result.enum = value.filter((entry) => entry !== null).map(String);
      if (value.includes(null)) result.nullable = true;
      result.type = "string";
    } else if (keyword === "oneOf" || keyword === "anyOf") {
      if (!Array.isArray(value)) continue;
      const variants = value.filter(isSchema);
      const nonNull = variants.filter((variant) => variant.type !== "null");
      if (nonNull.length < variants.length) result.nullable = true;
      if (nonNull.length === 1) Object.assign(result, adapt(nonNull[0] as JsonSchema, root, depth));
      else result.anyOf = nonNull.map((variant) => adapt(variant, root, depth));
    } else if (keyword === "properties" && isSchema(value)) {
      result.properties = Object.fromEntries(
        Object.entries(value).map(([name, property]) => [
          name,
          isSchema(property) ? adapt(property, root, depth) : {},
        ]),
      );
    } else if (keyword === "items") {
      if (isSchema(value)) result.items = adapt(value, root, depth);
    } else if (keyword === "exclusiveMinimum" && typeof value === "number") {
      result.minimum ??= value;
    } else if (keyword === "exclusiveMaximum" && typeof value === "number") {
      result.maximum ??= value;
    } else if (GEMINI_KEYWORDS.has(keyword) && result[keyword] === undefined) {
      result[keyword] = value;
    }
  }
  if (result.type === "object" && isSchema(result.properties) && Array.isArray(result.required)) {
    // Gemini rejects a `required` entry that names no property.
    const properties = result.properties;
    result.required = (result.required as unknown[]).filter(
      (name) => typeof name === "string" && name in properties,
    );
  }
  return result;
}

/**
 * A JSON Schema rewritten into the OpenAPI subset Gemini accepts for function parameters:
 *
 * - `$ref` to `#/$defs/…` or `#/definitions/…` is inlined (recursion stops at depth 8 with a
 *   plain object); `$defs`, `definitions`, `$schema`, `$id` are dropped.
 * - `type: ["x", "null"]`, a `null` variant of `anyOf`/`oneOf` and a `null` enum entry become
 *   `nullable: true`; `oneOf` becomes `anyOf`; `allOf` of objects is merged.
 * - `const` becomes a one-entry `enum`; enum entries become strings.
 * - `exclusiveMinimum`/`exclusiveMaximum` become the inclusive bounds (Gemini has no exclusive ones).
 * - Every other keyword Gemini does not know — `additionalProperties`, `patternProperties`,
 *   `not`, `if`/`then`/`else`, `uniqueItems`, `examples`, … — is dropped; the skill's own
 *   validation still enforces them when the call runs.
 */
export function toGeminiSchema(schema: JsonSchema): JsonSchema {
  return adapt(schema, schema, 0);
}
