import { describe, expect, it } from "vitest";
import { constraintText, parseJsonText, violationIssues } from "../src/app/form/field-text.js";
import {
  finalValue,
  initialValue,
  pathLabel,
  validateValue,
  valueAt,
  withValueAt,
} from "../src/app/form/field-values.js";
import { buildFieldModel, type FieldModel, MAX_FIELD_DEPTH } from "../src/app/form/schema-fields.js";
import { fromDateTimeLocal, toDateTimeLocal } from "../src/app/format.js";

/** The model of a property of an object schema. */
function property(model: FieldModel, name: string): FieldModel {
  if (model.kind !== "object") throw new Error(`expected an object field, got ${model.kind}`);
  const entry = model.properties.find((candidate) => candidate.name === name);
  if (entry === undefined) throw new Error(`no property ${name}`);
  return entry.field;
}

/** How many fields a model has (every node: objects, lists and their items, inputs). */
function fieldCount(model: FieldModel): number {
  if (model.kind === "object")
    return 1 + model.properties.reduce((sum, entry) => sum + fieldCount(entry.field), 0);
  if (model.kind === "array") return 1 + fieldCount(model.item);
  return 1;
}

function modelOf(schema: Record<string, unknown>, name = "value"): FieldModel {
  return property(buildFieldModel({ type: "object", properties: { [name]: schema } }), name);
}

describe("buildFieldModel", () => {
  it("reads objects with their required properties, nested", () => {
    const model = buildFieldModel({
      type: "object",
      required: ["name"],
      properties: {
        name: { type: "string" },
        address: { type: "object", required: ["city"], properties: { city: { type: "string" } } },
      },
    });
    expect(model).toMatchObject({ kind: "object", required: true });
    expect(property(model, "name")).toMatchObject({ kind: "string", required: true });
    const address = property(model, "address");
    expect(address).toMatchObject({ kind: "object", required: false });
    expect(property(address, "city")).toMatchObject({ kind: "string", required: true });
  });

  it("reads an object with properties but no type, and one with additionalProperties: false", () => {
    expect(buildFieldModel({ properties: { a: { type: "boolean" } } })).toMatchObject({ kind: "object" });
    expect(
      buildFieldModel({
        type: "object",
        additionalProperties: false,
        properties: { a: { type: "boolean" } },
      }),
    ).toMatchObject({ kind: "object" });
  });

  it("reads arrays of any supported item type, items always required", () => {
    const model = modelOf({ type: "array", items: { type: "integer" }, minItems: 1, maxItems: 3 });
    expect(model).toMatchObject({ kind: "array", minItems: 1, maxItems: 3 });
    if (model.kind !== "array") throw new Error("not an array");
    expect(model.item).toMatchObject({ kind: "number", integer: true, required: true });
    const objects = modelOf({
      type: "array",
      items: { type: "object", properties: { x: { type: "number" } } },
    });
    expect(objects).toMatchObject({ kind: "array", item: { kind: "object" } });
  });

  it("reads enums, const, numbers with limits and step, booleans", () => {
    expect(modelOf({ enum: ["a", "b", 3] })).toMatchObject({ kind: "enum", options: ["a", "b", 3] });
    expect(modelOf({ type: "string", enum: ["x", null] })).toMatchObject({ kind: "enum", nullable: true });
    expect(modelOf({ const: "v1" })).toMatchObject({ kind: "const", value: "v1" });
    expect(modelOf({ type: "number", minimum: 0, maximum: 1 })).toMatchObject({
      kind: "number",
      integer: false,
      minimum: 0,
      maximum: 1,
      step: "any",
    });
    expect(modelOf({ type: "integer", exclusiveMinimum: 0 })).toMatchObject({ step: 1, exclusiveMinimum: 0 });
    expect(modelOf({ type: "number", multipleOf: 0.5 })).toMatchObject({ step: 0.5 });
    expect(modelOf({ type: "boolean" })).toMatchObject({ kind: "boolean" });
  });

  it("gives string formats their input types and keeps length and pattern", () => {
    const types = ["date-time", "date", "email", "uri", "uuid"].map(
      (format) => (modelOf({ type: "string", format }) as { inputType: string }).inputType,
    );
    expect(types).toEqual(["datetime-local", "date", "email", "url", "text"]);
    expect(modelOf({ type: "string", minLength: 2, maxLength: 5, pattern: "^a" })).toMatchObject({
      minLength: 2,
      maxLength: 5,
      pattern: "^a",
    });
  });

  it("keeps defaults, and title and description as the hint", () => {
    expect(
      modelOf({ type: "string", default: "hi", title: "Greeting", description: "What to say" }),
    ).toMatchObject({
      hasDefault: true,
      default: "hi",
      description: "Greeting — What to say",
    });
  });

  it("reads nullable types: type arrays, nullable: true, and anyOf with null", () => {
    expect(modelOf({ type: ["string", "null"] })).toMatchObject({ kind: "string", nullable: true });
    expect(modelOf({ type: "integer", nullable: true })).toMatchObject({ kind: "number", nullable: true });
    expect(modelOf({ anyOf: [{ type: "number" }, { type: "null" }] })).toMatchObject({
      kind: "number",
      nullable: true,
    });
  });

  it("turns what a form cannot express into raw JSON, saying why", () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ oneOf: [{ type: "string" }, { type: "number" }] }, /oneOf/],
      [{ anyOf: [{ type: "string" }, { type: "number" }] }, /anyOf/],
      [{ allOf: [{ type: "string" }] }, /allOf/],
      [{ type: "object" }, /names are free/],
      [{ type: "object", additionalProperties: { type: "number" } }, /names are free/],
      [
        { type: "object", properties: { a: { type: "string" } }, additionalProperties: { type: "number" } },
        /further/,
      ],
      [{ type: "object", patternProperties: { "^x": {} } }, /patternProperties/],
      [{ type: ["string", "number"] }, /several types/],
      [{ type: "array" }, /no schema/],
      [{ type: "array", items: [{ type: "string" }] }, /tuple/],
      [{}, /no type/],
      [{ $ref: "#/$defs/missing" }, /cannot be resolved/],
      [{ $ref: "https://example.com/schema.json" }, /cannot be resolved/],
    ];
    for (const [schema, reason] of cases) {
      const model = modelOf(schema);
      expect(model.kind, JSON.stringify(schema)).toBe("json");
      expect((model as { reason: string }).reason).toMatch(reason);
    }
    expect(buildFieldModel(true)).toMatchObject({ kind: "json" });
    expect(buildFieldModel({ type: "object" })).toMatchObject({ kind: "json", required: true });
  });

  it("resolves local $refs and stops at a $ref cycle", () => {
    const model = buildFieldModel({
      $defs: {
        node: {
          type: "object",
          properties: { label: { type: "string" }, child: { $ref: "#/$defs/node" } },
        },
        point: { type: "object", properties: { x: { type: "number" } } },
      },
      type: "object",
      properties: {
        tree: { $ref: "#/$defs/node" },
        at: { $ref: "#/definitions/none" },
        p: { $ref: "#/$defs/point" },
      },
    });
    const tree = property(model, "tree");
    expect(tree.kind).toBe("object");
    expect(property(tree, "label").kind).toBe("string");
    expect(property(tree, "child")).toMatchObject({ kind: "json", reason: "#/$defs/node refers to itself" });
    expect(property(property(model, "p"), "x").kind).toBe("number");
    expect(property(model, "at").kind).toBe("json");
    // A root that refers to itself.
    expect(() => buildFieldModel({ $ref: "#" })).not.toThrow();
  });

  it("bounds deep nesting: 50 levels become raw JSON past the limit without blowing the stack", () => {
    let schema: Record<string, unknown> = { type: "string" };
    for (let level = 0; level < 50; level += 1) schema = { type: "object", properties: { next: schema } };
    let model = buildFieldModel(schema);
    let depth = 0;
    while (model.kind === "object") {
      model = property(model, "next");
      depth += 1;
    }
    expect(model.kind).toBe("json");
    expect(depth).toBeLessThanOrEqual(MAX_FIELD_DEPTH);
    expect(() => validateValue(buildFieldModel(schema), {})).not.toThrow();
  });

  it("bounds a wide graph of $refs (each referring twice to the next)", () => {
    const definitions: Record<string, unknown> = { d30: { type: "string" } };
    for (let index = 0; index < 30; index += 1) {
      const next = { $ref: `#/$defs/d${index + 1}` };
      definitions[`d${index}`] = { type: "object", properties: { left: next, right: next } };
    }
    const model = buildFieldModel({ $defs: definitions, $ref: "#/$defs/d0" });
    expect(model.kind).toBe("object");
  });

  it("treats a $ref with broken percent-encoding as unresolvable instead of throwing", () => {
    const model = buildFieldModel({ type: "object", properties: { bad: { $ref: "#/%E0%A4%A" } } });
    expect(property(model, "bad")).toMatchObject({ kind: "json", reason: "#/%E0%A4%A cannot be resolved" });
  });

  it("bounds the fields of a very wide object: the form never gets more than a thousand", () => {
    const properties: Record<string, unknown> = {};
    for (let index = 0; index < 5000; index += 1) properties[`p${index}`] = { type: "string" };
    expect(fieldCount(buildFieldModel({ type: "object", properties }))).toBeLessThanOrEqual(1000);
  });

  it("bounds the items a required list starts with (minItems), nested lists multiplying", () => {
    const huge = buildFieldModel({
      type: "object",
      required: ["list"],
      properties: { list: { type: "array", minItems: 100_000_000, items: { type: "string" } } },
    });
    expect(property(huge, "list")).toMatchObject({ kind: "json" });
    expect(initialValue(huge)).toEqual({});
    let nested: Record<string, unknown> = { type: "string" };
    for (let level = 0; level < 4; level += 1) nested = { type: "array", minItems: 40, items: nested };
    const value = initialValue(buildFieldModel(nested));
    expect(JSON.stringify(value ?? null).length).toBeLessThan(10_000);
  });
});

describe("initialValue", () => {
  it("pre-fills defaults, constants, required booleans and required objects", () => {
    const model = buildFieldModel({
      type: "object",
      required: ["flag", "settings", "mode"],
      properties: {
        greeting: { type: "string", default: "hello" },
        flag: { type: "boolean" },
        version: { const: 2 },
        mode: { enum: ["fast", "slow"] },
        settings: { type: "object", properties: { level: { type: "integer", default: 3 } } },
        optional: { type: "object", properties: { name: { type: "string" } } },
        extras: { type: "object", properties: { verbose: { type: "boolean", default: false } } },
        list: { type: "array", items: { type: "string" } },
      },
    });
    expect(initialValue(model)).toEqual({
      greeting: "hello",
      flag: false,
      version: 2,
      mode: "fast",
      settings: { level: 3 },
      extras: { verbose: false },
    });
  });

  it("starts a new array item with an empty text, and fills minItems", () => {
    const model = modelOf({ type: "array", items: { type: "string" }, minItems: 2 });
    expect(initialValue({ ...model, required: true })).toEqual(["", ""]);
  });

  it("copies defaults (a form never edits the schema's objects)", () => {
    const fallback = { a: [1] };
    const model = modelOf({
      type: "object",
      properties: { a: { type: "array", items: { type: "number" } } },
      default: fallback,
    });
    const value = initialValue(model) as { a: number[] };
    value.a.push(2);
    expect(fallback).toEqual({ a: [1] });
  });
});

describe("validateValue", () => {
  const model = buildFieldModel({
    type: "object",
    required: ["name", "count"],
    properties: {
      name: { type: "string", minLength: 2, maxLength: 5, pattern: "^[a-z]+$" },
      count: { type: "integer", minimum: 1, maximum: 10 },
      ratio: { type: "number", exclusiveMaximum: 1 },
      mode: { enum: ["a", "b"] },
      fixed: { const: true },
      address: { type: "object", required: ["city"], properties: { city: { type: "string" } } },
      tags: { type: "array", maxItems: 2, items: { type: "string", minLength: 1 } },
    },
  });

  it("names missing required fields by their labels", () => {
    expect(validateValue(model, {})).toEqual([
      { label: "name", message: "name is required" },
      { label: "count", message: "count is required" },
    ]);
  });

  it("checks lengths, patterns, limits, integers, enums, constants, nested objects and items", () => {
    const issues = validateValue(model, {
      name: "A",
      count: 2.5,
      ratio: 1,
      mode: "c",
      fixed: false,
      address: {},
      tags: ["x", "", "z"],
    }).map((issue) => issue.message);
    expect(issues).toEqual([
      "name must be at least 2 characters long",
      "name must match the pattern ^[a-z]+$",
      "count must be a whole number",
      "ratio must be less than 1",
      'mode must be one of "a", "b"',
      "fixed must be true",
      "address.city is required",
      "tags takes at most 2 items",
      "tags[1] must not be empty",
    ]);
    expect(validateValue(model, { name: "abc", count: 11 }).map((issue) => issue.message)).toEqual([
      "count must be at most 10",
    ]);
    expect(validateValue(model, { name: "abc", count: 3 })).toEqual([]);
  });

  it("needs a value for a root that is not an object", () => {
    expect(validateValue(buildFieldModel({ type: "string" }), undefined)).toEqual([
      { label: "input", message: "input is required" },
    ]);
    expect(validateValue(buildFieldModel({ type: "object" }), undefined)).toEqual([]);
  });

  it("accepts null only where the schema allows it", () => {
    expect(validateValue(modelOf({ type: ["string", "null"] }), null)).toEqual([]);
    expect(validateValue(modelOf({ type: "string" }), null, ["value"])).toEqual([
      { label: "value", message: "value must not be null" },
    ]);
  });
});

describe("finalValue", () => {
  const model = buildFieldModel({
    type: "object",
    properties: {
      address: {
        type: "object",
        required: ["city"],
        properties: { city: { type: "string" }, kind: { const: "home" } },
      },
      name: { type: "string" },
    },
  });

  it("drops optional objects left empty, so their own required fields do not trip", () => {
    expect(finalValue(model, { address: {}, name: "x" })).toEqual({ name: "x" });
    expect(validateValue(model, finalValue(model, { address: {} }))).toEqual([]);
  });

  it("adds constants to objects that are sent, and keeps properties the form does not show", () => {
    expect(finalValue(model, { address: { city: "Oslo" }, extra: 1 })).toEqual({
      address: { city: "Oslo", kind: "home" },
      extra: 1,
    });
  });

  it("orders properties as the schema does, the others after", () => {
    expect(
      Object.keys(finalValue(model, { extra: 1, name: "x", address: { city: "Oslo" } }) as object),
    ).toEqual(["address", "name", "extra"]);
  });

  it("keeps the root object even when empty", () => {
    expect(finalValue(model, {})).toEqual({});
  });
});

describe("paths", () => {
  it("labels nested properties with dots and items with brackets", () => {
    expect(pathLabel(["address", "city"])).toBe("address.city");
    expect(pathLabel(["items", 0, "name"])).toBe("items[0].name");
    expect(pathLabel([])).toBe("input");
  });

  it("reads and writes values at paths without touching the original", () => {
    const original = { a: { b: 1 } };
    const next = withValueAt(original, ["a", "list", 1], "x");
    expect(next).toEqual({ a: { b: 1, list: [undefined, "x"] } });
    expect(original).toEqual({ a: { b: 1 } });
    expect(valueAt(next, ["a", "list", 1])).toBe("x");
    expect(withValueAt(next, ["a", "b"], undefined)).toEqual({ a: { list: [undefined, "x"] } });
    expect(valueAt(undefined, ["a"])).toBeUndefined();
  });

  it("reads only a value's own properties and writes `__proto__` as a plain property", () => {
    expect(valueAt({}, ["constructor"])).toBeUndefined();
    expect(valueAt({ list: [] }, ["list", "length"])).toBeUndefined();
    const written = withValueAt({}, ["__proto__"], { polluted: true });
    expect(JSON.stringify(written)).toBe('{"__proto__":{"polluted":true}}');
    expect(Object.getPrototypeOf(written)).toBe(Object.prototype);
    const model = buildFieldModel({
      type: "object",
      properties: { constructor: { type: "string" }, toString: { type: "object" } },
    });
    expect(finalValue(model, {})).toEqual({});
    expect(validateValue(model, {})).toEqual([]);
  });
});

describe("violationIssues", () => {
  it("names the server's violations by the form's labels", () => {
    expect(
      violationIssues([
        {
          instancePath: "/address/city",
          keyword: "type",
          message: "must be string",
          params: { type: "string" },
        },
        {
          instancePath: "",
          keyword: "required",
          message: "must have required property 'name'",
          params: { missingProperty: "name" },
        },
        {
          instancePath: "/tags/0",
          keyword: "minLength",
          message: "must NOT have fewer than 2 characters",
          params: {},
        },
        {
          instancePath: "",
          keyword: "additionalProperties",
          message: "must NOT have additional properties",
          params: { additionalProperty: "x" },
        },
        { instancePath: "/a~1b", keyword: "type", message: "must be number", params: {} },
      ]),
    ).toEqual([
      { label: "address.city", message: "address.city must be string" },
      { label: "name", message: "name is required" },
      { label: "tags[0]", message: "tags[0] must NOT have fewer than 2 characters" },
      { label: "input", message: "input must NOT have additional properties (x)" },
      { label: "a/b", message: "a/b must be number" },
    ]);
    expect(violationIssues(undefined)).toEqual([]);
  });
});

describe("text helpers", () => {
  it("parses JSON text, an empty box meaning no value", () => {
    expect(parseJsonText(' {"a": 1} ')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseJsonText("  ")).toEqual({ ok: true, value: undefined });
    expect(parseJsonText("{a:")).toMatchObject({ ok: false });
  });

  it("round-trips date-times through the datetime-local box", () => {
    const iso = "2026-03-04T05:06:07.000Z";
    expect(fromDateTimeLocal(toDateTimeLocal(iso))).toBe(iso);
    expect(toDateTimeLocal("not a date")).toBe("");
    expect(fromDateTimeLocal("")).toBeUndefined();
    expect(toDateTimeLocal("2026-03-04T05:06:07.000Z", "minutes")).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d$/);
  });

  it("describes limits in words", () => {
    expect(constraintText(modelOf({ type: "integer", minimum: 1, maximum: 9 }))).toBe(
      "A whole number, at least 1, at most 9.",
    );
    expect(constraintText(modelOf({ type: "boolean" }))).toBeUndefined();
  });
});
