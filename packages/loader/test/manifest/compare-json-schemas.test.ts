import { describe, expect, it } from "vitest";
import { z } from "zod";
import { firstSchemaDifference } from "../../src/manifest/compare-json-schemas.js";

describe("firstSchemaDifference", () => {
  it("ignores $schema, annotations, key order and the order of required, enum and type lists", () => {
    expect(
      firstSchemaDifference(
        {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          title: "Weather",
          properties: {
            units: { enum: ["c", "f"], default: "c", description: "unit" },
            at: { type: ["string", "null"] },
          },
          required: ["units", "at"],
        },
        {
          required: ["at", "units"],
          properties: { at: { type: ["null", "string"] }, units: { enum: ["f", "c"] } },
          type: "object",
        },
      ),
    ).toBeUndefined();
  });

  it("keeps property names that look like annotations: `properties.description` is a field", () => {
    expect(
      firstSchemaDifference(
        { type: "object", properties: { description: { type: "string" } } },
        { type: "object", properties: {} },
      ),
    ).toEqual({ path: "properties.description", left: { type: "string" }, right: undefined });
  });

  it("treats zod's safe-integer bounds and an open additionalProperties as absent", () => {
    const { $schema: _dialect, ...fromZod } = z.toJSONSchema(z.object({ n: z.number().int() }).loose(), {
      io: "input",
    });
    expect(
      firstSchemaDifference(fromZod, {
        type: "object",
        properties: { n: { type: "integer" } },
        required: ["n"],
      }),
    ).toBeUndefined();
  });

  it("counts additionalProperties: false, unless asked to treat objects as open (output schemas)", () => {
    const closed = { type: "object", properties: { a: { type: "string" } }, additionalProperties: false };
    const open = { type: "object", properties: { a: { type: "string" } } };
    expect(firstSchemaDifference(open, closed)).toEqual({
      path: "additionalProperties",
      left: undefined,
      right: false,
    });
    expect(firstSchemaDifference(open, closed, { openObjects: true })).toBeUndefined();
  });

  it("names the type first, and a differing list whole", () => {
    expect(firstSchemaDifference({ type: "string", minLength: 1 }, { type: "number", minimum: 1 })).toEqual({
      path: "type",
      left: "string",
      right: "number",
    });
    expect(firstSchemaDifference({ enum: ["a", "b"] }, { enum: ["a", "c"] })).toEqual({
      path: "enum",
      left: ["a", "b"],
      right: ["a", "c"],
    });
    expect(
      firstSchemaDifference(
        { anyOf: [{ type: "string" }, { type: "number" }] },
        { anyOf: [{ type: "string" }] },
      ),
    ).toMatchObject({ path: "anyOf" });
  });
});
