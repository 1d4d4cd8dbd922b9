import type { JsonSchema } from "../api/api-types.js";
import { isJsonObject } from "./is-json-object.js";

/**
 * A run form's fields, worked out from a skill's input JSON Schema. Pure (no DOM): the form
 * renders it, and Node tests check it keyword by keyword. What a form cannot express — `oneOf`,
 * `anyOf`, `allOf`, maps (`additionalProperties` schemas), tuples, recursive `$ref`s, nesting past
 * {@link MAX_FIELD_DEPTH} — becomes a `json` field: a raw-JSON text box for that part only.
 */
export type FieldModel =
  | ObjectField
  | ArrayField
  | EnumField
  | ConstField
  | NumberField
  | BooleanField
  | StringField
  | JsonField;

/** What every field has. */
export interface FieldCommon {
  /** Whether a value must be given (a `required` property, an array item, the root). */
  required: boolean;
  /** `title` and `description` of the schema, shown as the field's hint. */
  description: string | undefined;
  /** Whether `null` is allowed besides the field's type (`type: [..., "null"]`, `nullable: true`). */
  nullable: boolean;
  /** The schema's `default`, pre-filled. */
  default: unknown;
  hasDefault: boolean;
}

export interface ObjectField extends FieldCommon {
  kind: "object";
  properties: Array<{ name: string; field: FieldModel }>;
}

export interface ArrayField extends FieldCommon {
  kind: "array";
  /** The model of every item (items are always `required`: a hole cannot be sent). */
  item: FieldModel;
  minItems: number | undefined;
  maxItems: number | undefined;
}

export interface EnumField extends FieldCommon {
  kind: "enum";
  options: unknown[];
}

export interface ConstField extends FieldCommon {
  kind: "const";
  value: unknown;
}

export interface NumberField extends FieldCommon {
  kind: "number";
  integer: boolean;
  minimum: number | undefined;
  maximum: number | undefined;
  exclusiveMinimum: number | undefined;
  exclusiveMaximum: number | undefined;
  /** The input's `step`: 1 for integers, `multipleOf` when given, else `any`. */
  step: number | "any";
}

export interface BooleanField extends FieldCommon {
  kind: "boolean";
}

/** The `<input type>` a string format is edited with. */
export type StringInputType = "text" | "email" | "url" | "date" | "datetime-local";

export interface StringField extends FieldCommon {
  kind: "string";
  inputType: StringInputType;
  format: string | undefined;
  minLength: number | undefined;
  maxLength: number | undefined;
  pattern: string | undefined;
  /** Inside an array an empty text is `""`; elsewhere it means "not given". */
  inArray: boolean;
}

export interface JsonField extends FieldCommon {
  kind: "json";
  /** Why the form cannot show this part: "uses oneOf". */
  reason: string;
}

/** A value's place in the input: property names and array indexes. */
export type FieldPath = ReadonlyArray<string | number>;

/** A problem with one field's value, named by its label. */
export interface FieldIssue {
  label: string;
  message: string;
}

/** Nesting past this many levels is edited as raw JSON (it also bounds every walk of the model). */
export const MAX_FIELD_DEPTH = 16;
/**
 * Fields one form builds at most, counting the items a required list starts with; past it a part
 * is raw JSON (a wide object, a wide `$ref` graph or a huge `minItems` must not hang the tab).
 */
const MAX_FIELDS = 1000;

const STRING_INPUT_TYPES: Record<string, StringInputType> = {
  "date-time": "datetime-local",
  date: "date",
  email: "email",
  "idn-email": "email",
  uri: "url",
  url: "url",
  iri: "url",
};

/** Keywords whose meaning a form cannot show: their part becomes raw JSON. */
const UNSUPPORTED_KEYWORDS = [
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "if",
  "patternProperties",
  "dependentSchemas",
  "dependencies",
  "prefixItems",
  "propertyNames",
  "contains",
];

type SchemaObject = { [keyword: string]: unknown };

interface BuildContext {
  root: JsonSchema;
  /** `$ref`s being resolved on the way here: meeting one again is a cycle. */
  references: readonly string[];
  depth: number;
  /** Fields counted so far: each is counted by its parent, before it is built. */
  budget: { fields: number };
}

/** The field model of a whole input schema (its root is `required`). */
export function buildFieldModel(schema: JsonSchema): FieldModel {
  return build(schema, { root: schema, references: [], depth: 0, budget: { fields: 1 } }, true, false);
}

function build(schema: JsonSchema, context: BuildContext, required: boolean, inArray: boolean): FieldModel {
  if (typeof schema === "boolean") {
    return json(schema, required, schema ? "any JSON value is accepted" : "no value is accepted");
  }
  if (!isJsonObject(schema)) return json({}, required, "its schema is not an object");
  if (context.depth >= MAX_FIELD_DEPTH) return json(schema, required, "it is nested too deeply for a form");

  if (typeof schema.$ref === "string") {
    const reference = schema.$ref;
    if (context.references.includes(reference))
      return json(schema, required, `${reference} refers to itself`);
    const target = resolveReference(context.root, reference);
    if (target === undefined) return json(schema, required, `${reference} cannot be resolved`);
    const { $ref: _reference, ...siblings } = schema;
    const merged = isJsonObject(target) ? { ...target, ...siblings } : target;
    return build(
      merged,
      { ...context, references: [...context.references, reference], depth: context.depth + 1 },
      required,
      inArray,
    );
  }

  const nullableOf = nullableAlternative(schema);
  if (nullableOf !== undefined) {
    const { anyOf: _anyOf, oneOf: _oneOf, ...rest } = schema;
    const inner = build(
      isJsonObject(nullableOf) ? { ...nullableOf, ...rest } : nullableOf,
      { ...context, depth: context.depth + 1 },
      required,
      inArray,
    );
    return inner.kind === "json" ? inner : { ...inner, nullable: true };
  }

  const unsupported = UNSUPPORTED_KEYWORDS.find((keyword) => schema[keyword] !== undefined);
  if (unsupported !== undefined) return json(schema, required, `it uses ${unsupported}`);

  const common = commonOf(schema, required);
  if ("const" in schema) return { ...common, kind: "const", value: schema.const };
  if (Array.isArray(schema.enum)) {
    return { ...common, kind: "enum", options: schema.enum, nullable: schema.enum.includes(null) };
  }

  const types = typesOf(schema);
  const nullable = types.includes("null") || schema.nullable === true;
  const concrete = types.filter((type) => type !== "null");
  if (concrete.length !== 1) {
    return json(
      schema,
      required,
      concrete.length === 0 ? "it names no type" : `it allows several types (${concrete.join(", ")})`,
    );
  }
  const next: BuildContext = { ...context, depth: context.depth + 1 };
  switch (concrete[0]) {
    case "object":
      return objectField(schema, next, { ...common, nullable });
    case "array": {
      const items = schema.items;
      if (items === undefined || Array.isArray(items)) {
        return json(schema, required, items === undefined ? "its items have no schema" : "it is a tuple");
      }
      const budget = context.budget;
      if (budget.fields + 1 > MAX_FIELDS) return json(schema, required, "the form has too many fields");
      const before = budget.fields;
      budget.fields += 1;
      const item = build(items as JsonSchema, next, true, true);
      // A required list starts with `minItems` items: each copies the fields of the item.
      const minItems = numberOf(schema.minItems);
      const copies = ((minItems ?? 0) - 1) * (budget.fields - before);
      if (copies > 0 && budget.fields + copies > MAX_FIELDS) {
        return json(schema, required, "it needs more items than a form can show");
      }
      if (copies > 0) budget.fields += copies;
      return {
        ...common,
        nullable,
        kind: "array",
        item,
        minItems,
        maxItems: numberOf(schema.maxItems),
      };
    }
    case "number":
    case "integer": {
      const integer = concrete[0] === "integer";
      const multipleOf = numberOf(schema.multipleOf);
      return {
        ...common,
        nullable,
        kind: "number",
        integer,
        minimum: numberOf(schema.minimum),
        maximum: numberOf(schema.maximum),
        exclusiveMinimum: numberOf(schema.exclusiveMinimum),
        exclusiveMaximum: numberOf(schema.exclusiveMaximum),
        step: multipleOf ?? (integer ? 1 : "any"),
      };
    }
    case "boolean":
      return { ...common, nullable, kind: "boolean" };
    case "string": {
      const format = typeof schema.format === "string" ? schema.format : undefined;
      return {
        ...common,
        nullable,
        kind: "string",
        format,
        inputType: (format === undefined ? undefined : STRING_INPUT_TYPES[format]) ?? "text",
        minLength: numberOf(schema.minLength),
        maxLength: numberOf(schema.maxLength),
        pattern: typeof schema.pattern === "string" ? schema.pattern : undefined,
        inArray,
      };
    }
    default:
      return json(schema, required, `its type is ${String(concrete[0])}`);
  }
}

function objectField(schema: SchemaObject, context: BuildContext, common: FieldCommon): FieldModel {
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  const names = Object.keys(properties);
  const extra = schema.additionalProperties;
  // A map (`{ type: "object" }`, `additionalProperties: { … }`) has names the form cannot know.
  if (names.length === 0 && extra !== false)
    return json(schema, common.required, "its property names are free");
  if (extra !== undefined && typeof extra !== "boolean") {
    return json(schema, common.required, "it takes further properties of a schema");
  }
  if (context.budget.fields + names.length > MAX_FIELDS) {
    return json(schema, common.required, "the form has too many fields");
  }
  context.budget.fields += names.length;
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  return {
    ...common,
    kind: "object",
    properties: names.map((name) => ({
      name,
      field: build(properties[name] as JsonSchema, context, required.has(name), false),
    })),
  };
}

function json(schema: JsonSchema, required: boolean, reason: string): JsonField {
  return { ...commonOf(isJsonObject(schema) ? schema : {}, required), kind: "json", reason };
}

function commonOf(schema: SchemaObject, required: boolean): FieldCommon {
  const texts = [schema.title, schema.description].filter(
    (text): text is string => typeof text === "string" && text !== "",
  );
  return {
    required,
    description: texts.length === 0 ? undefined : texts.join(" — "),
    nullable: schema.nullable === true,
    default: schema.default,
    hasDefault: "default" in schema,
  };
}

/** `anyOf`/`oneOf` of one schema and `{ type: "null" }` (how zod writes `.nullable()`): that schema. */
function nullableAlternative(schema: SchemaObject): JsonSchema | undefined {
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (!Array.isArray(alternatives) || alternatives.length !== 2) return undefined;
  if (schema.anyOf !== undefined && schema.oneOf !== undefined) return undefined;
  const isNull = (entry: unknown) =>
    isJsonObject(entry) && entry.type === "null" && Object.keys(entry).length === 1;
  const [first, second] = alternatives as unknown[];
  if (isNull(first) && !isNull(second)) return second as JsonSchema;
  if (isNull(second) && !isNull(first)) return first as JsonSchema;
  return undefined;
}

function typesOf(schema: SchemaObject): string[] {
  if (typeof schema.type === "string") return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.map(String);
  if (schema.properties !== undefined || schema.additionalProperties !== undefined) return ["object"];
  if (schema.items !== undefined) return ["array"];
  return [];
}

/** A local `$ref` (`#/$defs/node`, `#/definitions/node`, `#`) in the root schema. */
function resolveReference(root: JsonSchema, reference: string): JsonSchema | undefined {
  if (reference === "#") return root;
  if (!reference.startsWith("#/")) return undefined;
  let current: unknown = root;
  for (const raw of reference.slice(2).split("/")) {
    const segment = decodedSegment(raw);
    if (segment === undefined || !isJsonObject(current) || !Object.hasOwn(current, segment)) return undefined;
    current = current[segment];
  }
  return typeof current === "boolean" || isJsonObject(current) ? current : undefined;
}

/** A JSON Pointer segment of a URI fragment, or undefined when its percent-encoding is broken. */
function decodedSegment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
  } catch {
    return undefined;
  }
}

function numberOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
