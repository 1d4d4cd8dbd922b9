import type { JsonSchema } from "@skillbox/core";

/** Where two JSON Schemas first differ, and what each side has there. */
export interface SchemaDifference {
  /** Dotted path of keywords to the difference, `(root)` for the top level. */
  path: string;
  /** The first schema's value there (undefined: absent). */
  left: unknown;
  /** The second schema's value there (undefined: absent). */
  right: unknown;
}

/**
 * Keywords that describe but never change what validates (Ajv applies no `default`: the executor
 * does not set `useDefaults`). `$schema` names a dialect, not a constraint.
 */
const ANNOTATIONS = new Set([
  "$schema",
  "$comment",
  "title",
  "description",
  "examples",
  "default",
  "deprecated",
  "readOnly",
  "writeOnly",
]);

/** Keywords whose array value is a set: order carries no meaning. */
const SET_KEYWORDS = new Set(["required", "enum", "type"]);

/** The bounds zod writes for every `z.number().int()`: the same as none for a JSON number. */
const SAFE_INTEGER_BOUNDS = new Map([
  ["minimum", Number.MIN_SAFE_INTEGER],
  ["maximum", Number.MAX_SAFE_INTEGER],
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** How to compare: see {@link firstSchemaDifference}. */
export interface SchemaComparisonOptions {
  /** Count `additionalProperties: false` as absent (zod writes it on every object of an output schema). */
  openObjects?: boolean;
}

/** A keyword's value with no effect on validation, dropped before comparing. */
function isNoOp(
  key: string,
  value: unknown,
  schema: Record<string, unknown>,
  options: SchemaComparisonOptions,
): boolean {
  if (ANNOTATIONS.has(key)) return true;
  // `additionalProperties: true` and `{}` are the default; `false` is a real constraint.
  if (key === "additionalProperties")
    return (
      value === true ||
      (value === false && options.openObjects === true) ||
      (isRecord(value) && Object.keys(value).length === 0)
    );
  return schema.type === "integer" && SAFE_INTEGER_BOUNDS.get(key) === value;
}

/** Keywords whose values are schemas (or maps / lists of them), normalized in turn. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

/**
 * A schema reduced to what validates: annotations and zod's implied defaults dropped, a one-type
 * `type` list as its type, set-like lists sorted. Key order never matters (compared by key).
 */
function normalize(schema: unknown, options: SchemaComparisonOptions): unknown {
  if (Array.isArray(schema)) return schema.map((item) => normalize(item, options));
  if (!isRecord(schema)) return schema;
  const normalized: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (isNoOp(key, value, schema, options)) continue;
    if (SCHEMA_MAPS.has(key) && isRecord(value)) {
      normalized[key] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, normalize(sub, options)]),
      );
    } else if (SET_KEYWORDS.has(key) && Array.isArray(value)) {
      // Items are values (enum members, type and property names), not schemas: kept as they are.
      const sorted = [...value].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
      normalized[key] = key === "type" && sorted.length === 1 ? sorted[0] : sorted;
    } else if (key === "enum" || key === "const") {
      normalized[key] = value;
    } else {
      normalized[key] = normalize(value, options);
    }
  }
  return normalized;
}

/** Keywords compared first: a different `type` explains more than what follows from it. */
const FIRST_KEYWORDS = ["type", "enum", "const"];

function byWeight(left: string, right: string): number {
  const weight = (key: string) =>
    FIRST_KEYWORDS.includes(key) ? FIRST_KEYWORDS.indexOf(key) : FIRST_KEYWORDS.length;
  return weight(left) - weight(right) || (left < right ? -1 : left > right ? 1 : 0);
}

function differenceOf(left: unknown, right: unknown, path: string[]): SchemaDifference | undefined {
  const here = (): SchemaDifference => ({ path: path.length === 0 ? "(root)" : path.join("."), left, right });
  if (Array.isArray(left) && Array.isArray(right)) {
    // A list of plain values (`required`, `enum`, `type`) differs as a whole: name it whole.
    const plain = [...left, ...right].every((item) => typeof item !== "object" || item === null);
    if (plain) return JSON.stringify(left) === JSON.stringify(right) ? undefined : here();
    if (left.length !== right.length) return here();
    for (const [index, item] of left.entries()) {
      const found = differenceOf(item, right[index], [...path, String(index)]);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (isRecord(left) && isRecord(right)) {
    for (const key of [...new Set([...Object.keys(left), ...Object.keys(right)])].sort(byWeight)) {
      const found = differenceOf(left[key], right[key], [...path, key]);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  return Object.is(left, right) ? undefined : here();
}

/**
 * The first place where `left` and `right` validate differently, or undefined when they agree.
 * Agreeing means equal after normalizing: `$schema` and annotations (`title`, `description`,
 * `examples`, `default`, …) ignored, key order ignored, `required` / `enum` / `type` lists
 * compared as sets, `additionalProperties: true` or `{}` the same as none, and the safe-integer
 * bounds zod writes for `.int()` the same as none (and, with `openObjects`, `additionalProperties:
 * false` too). Everything else — types, properties, required fields, enums, formats, bounds —
 * must match.
 */
export function firstSchemaDifference(
  left: JsonSchema,
  right: JsonSchema,
  options: SchemaComparisonOptions = {},
): SchemaDifference | undefined {
  return differenceOf(normalize(left, options), normalize(right, options), []);
}
